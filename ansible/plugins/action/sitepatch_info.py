# The sitepatch_info task: `sitepatch status` of the host's environment as data, to
# register and use in `when:` and in reports. Reads only, so it also runs in check mode.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.sitepatch.fleet.plugins.plugin_utils import runner

ARGUMENTS = dict(
    venv=dict(type='str'),
    state_dir=dict(type='str'),
    lock_timeout=dict(type='int'),
    executable=dict(type='str'),
)

NOT_INTACT = 3  # sitepatch status: a patch needs attention; that is data here, not failure


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENTS)

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _, args = self.validate_argument_spec(argument_spec=ARGUMENTS)
        runner.refuse_become(self._task)

        def var(name):
            value = task_vars.get(name)
            return self._templar.template(value) if value is not None else None

        executable = args['executable'] or var('sitepatch_executable') or 'sitepatch'
        venv = args['venv'] or var('sitepatch_venv')
        if not venv:
            raise AnsibleError('which environment? set venv: on the task or sitepatch_venv for the host')
        host, ssh_words = runner.target_of(self._connection, self._play_context)
        globals_ = runner.globals_for(host, ssh_words, venv, args['state_dir'], args['lock_timeout'])
        argv, rc, doc, err = runner.run(executable, globals_, 'status', [])

        # failed=False: Ansible takes any nonzero rc for a failure, and 3 is an answer here.
        result.update(cmd=argv, rc=rc, changed=False, failed=False)
        if rc not in (0, NOT_INTACT) or not doc or 'patches' not in doc:
            result.update(runner.failure(rc, doc, err))
            return result
        patches = doc['patches']
        result.update(
            environment=doc.get('environment'),
            intact=bool(doc.get('ok')),
            patches=patches,
            applied=[p['id'] for p in patches],
            needs_attention=[p['id'] for p in patches if p.get('advice') != 'ok'],
            needs_reapply=[p['id'] for p in patches if p.get('advice') == 'needs reapplying'],
            commands=[p['command'] for p in patches if p.get('command')],
        )
        return result
