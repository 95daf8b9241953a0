# The sitepatch task: runs on the controller, reaches the host through sitepatch's own
# ssh built from the host's connection settings. Nothing is copied to the host and no
# Ansible module runs there: sitepatch's agent does the work over one connection.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.six import string_types
from ansible.plugins.action import ActionBase

from ansible_collections.sitepatch.fleet.plugins.plugin_utils import runner

ARGUMENTS = dict(
    recipes=dict(type='list', elements='str', default=[]),
    ids=dict(type='list', elements='str', default=[]),
    state=dict(type='str', default='present', choices=['present', 'absent', 'synced']),
    keep_others=dict(type='bool', default=False),
    venv=dict(type='str'),
    force=dict(type='bool', default=False),
    system=dict(type='bool', default=False),
    check_command=dict(type='str'),
    state_dir=dict(type='str'),
    lock_timeout=dict(type='int'),
    executable=dict(type='str'),
)


def _recipe_id(path):
    import yaml  # ansible-core's own dependency

    try:
        with open(path, 'rb') as f:
            document = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise AnsibleError('recipe %s: %s' % (path, to_text(e)))
    if not isinstance(document, dict) or not isinstance(document.get('id'), string_types):
        raise AnsibleError('recipe %s: no `id:` in it' % path)
    return document['id']


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(ARGUMENTS)

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _, args = self.validate_argument_spec(argument_spec=ARGUMENTS)
        runner.refuse_become(self._task)

        state = args['state']
        recipes = [self._find_needle('files', r) for r in args['recipes']]
        if state == 'absent' and not recipes and not args['ids']:
            raise AnsibleError('state=absent needs the recipes (or ids) of the patches to roll back')
        if state == 'synced' and not recipes:
            raise AnsibleError('state=synced needs the recipes (files, or a folder of them) the host must end with')

        executable, globals_ = self._invocation(args, task_vars)
        check = bool(self._task.check_mode)
        if state == 'synced':
            # The host ends with exactly these recipes; in check mode `sync --check` says
            # what it would do (exit 3 then means "would change", not a failure).
            flags = (['--force'] if args['force'] else []) + (['--keep-others'] if args['keep_others'] else [])
            argv, rc, doc, err = runner.run(executable, globals_, 'sync', flags + (['--check'] if check else []) + recipes)
            if check and rc == 3 and doc and doc.get('ok'):
                rc = 0
        elif state == 'present':
            flags = (['--force'] if args['force'] else []) + (['--system'] if args['system'] else [])
            if args['check_command'] and not check:
                # Run on the host after the write; a failure rolls this host back, and
                # fails this host's task alone.
                flags += ['--check-with', args['check_command']]
            if not recipes:
                # No recipe files: the host's history has them. After a reinstall or an
                # upgrade, its patches go back (the ids named, else every one taken away).
                which = args['ids'] or ['--all']
                extra = flags + (['--dry-run'] if check else [])
                argv, rc, doc, err = runner.run(executable, globals_, 'reapply', extra + which)
            else:
                # plan takes no flags; `apply --dry-run` is plan with them.
                command, extra = ('apply', flags + ['--dry-run']) if check and flags else ('plan' if check else 'apply', flags)
                argv, rc, doc, err = runner.run(executable, globals_, command, extra + recipes)
        else:
            ids = []
            for i in args['ids'] + [_recipe_id(r) for r in recipes]:
                if i not in ids:
                    ids.append(i)
            extra = ['--missing-ok'] + (['--dry-run'] if check else [])
            argv, rc, doc, err = runner.run(executable, globals_, 'rollback', extra + ids)

        result['cmd'] = argv
        result['rc'] = rc
        if rc != 0 or not doc or not doc.get('ok'):
            result.update(runner.failure(rc, doc, err))
            result['changed'] = False
            return result
        result.update(self._report(doc, state, check))
        if err.strip():
            result['stderr'] = err
        return result

    def _invocation(self, args, task_vars):
        def var(name):
            value = task_vars.get(name)
            return self._templar.template(value) if value is not None else None

        executable = args['executable'] or var('sitepatch_executable') or 'sitepatch'
        venv = args['venv'] or var('sitepatch_venv')
        if not venv:
            raise AnsibleError('which environment? set venv: on the task or sitepatch_venv for the host')
        host, ssh_words = runner.target_of(self._connection, self._play_context)
        if host is None:
            venv = os.path.expanduser(venv)
        return executable, runner.globals_for(host, ssh_words, venv, args['state_dir'], args['lock_timeout'])

    def _report(self, doc, state, check):
        if state == 'synced':
            return dict(
                changed=not doc.get('in_sync', True) if check else bool(doc.get('written')),
                steps=doc.get('steps', []),
                files=doc.get('files', []),
                written=bool(doc.get('written')),
                commit=doc.get('commit') or '',
                notes=doc.get('notes', []),
            )
        files = doc.get('files', [])
        written = bool(doc.get('written', False))
        out = dict(
            changed=bool(files) if check else written,
            files=[f['path'] for f in files],
            written=written,
            commit=doc.get('commit') or '',  # sitepatch says null when nothing was committed
            pyc_removed=doc.get('pyc_removed', []),
            notes=doc.get('notes', []),
        )
        if state == 'present':
            out['edits'] = doc.get('edits', [])
            out['distributions'] = sorted(set(
                '%s==%s' % (f['distribution'], f['version']) for f in files if f.get('distribution')))
            warnings = [e['warning'] for e in out['edits'] if e.get('warning')]
            warnings += doc.get('placement', [])
            if warnings:
                out['warnings'] = warnings
        else:
            out['ids'] = doc.get('ids', [])
        if self._task.diff and files:
            out['diff'] = dict(prepared=''.join(f.get('diff', '') for f in files))
        return out
