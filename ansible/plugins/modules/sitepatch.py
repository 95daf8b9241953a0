#!/usr/bin/python
# The documentation of the sitepatch task; the work is done by the action plugin of the
# same name, on the controller.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sitepatch
short_description: Apply or roll back sitepatch recipes in a host's Python environment
version_added: 1.0.0
description:
  - Runs the C(sitepatch) binary on the controller against the host's environment,
    with C(--host) and C(--ssh-command) built from the host's own connection settings
    (C(ansible_host), C(ansible_port), C(ansible_user), C(ansible_ssh_private_key_file),
    C(ansible_ssh_args), C(ansible_ssh_common_args), C(ansible_ssh_extra_args)) and
    Ansible's ControlPersist socket, so a host costs at most one ssh handshake.
  - Nothing is copied to the host and no module runs there; the host needs only the
    environment's own Python (3.8 or newer).
  - With C(state=present) the recipes are applied (C(sitepatch apply)); with
    C(state=absent) the patches they made are rolled back (C(sitepatch rollback)),
    restoring pip's bytes.
  - With C(state=synced) the host ends with exactly the recipes given (files, or a folder
    of them, as a project keeps C(patches/)); C(sitepatch sync) applies what is missing,
    puts back what an upgrade took away, and rolls back applied patches outside the set
    (I(keep_others) leaves them). In check mode C(sitepatch sync --check) runs, and
    C(changed) says whether the host is out of sync. A recipe whose C(requires) excludes
    the host's version fails that host's task (exit 3), after the rest is applied.
  - With C(state=present) and no I(recipes), the patches the host's history records are
    applied again from its copies of their recipes (C(sitepatch reapply)), those named in
    I(ids), else every one an upgrade or a reinstall took away.
  - In check mode C(sitepatch plan) (or C(rollback --dry-run)) runs instead and nothing
    is written; in diff mode the exact unified diff is returned as the task's diff.
  - C(changed) is what sitepatch wrote. A failure carries sitepatch's own message and exit code.
  - For C(ansible_connection=local) sitepatch runs on the controller without C(--host).
options:
  recipes:
    description:
      - Recipe files (YAML) on the controller, found as the C(copy) module finds its
        sources (the role's C(files/), the playbook's folder).
      - With C(state=absent), the patches with these recipes' ids are rolled back.
    type: list
    elements: str
    default: []
  ids:
    description:
      - With C(state=absent), patch ids to roll back, besides those of I(recipes).
        An id that is not applied on the host is skipped.
      - With C(state=present) and no I(recipes), the patches to reapply from the host's
        history (C(sitepatch reapply ID...)); none means C(reapply --all).
    type: list
    elements: str
    default: []
  state:
    description:
      - C(present) applies the recipes (or, without recipes, reapplies from the history);
        applying again changes nothing.
      - C(absent) rolls the patches back; rolling back again changes nothing.
      - C(synced) makes the host's applied patches exactly I(recipes) (C(sitepatch sync));
        syncing again changes nothing.
    type: str
    choices: [present, absent, synced]
    default: present
  keep_others:
    description:
      - With C(state=synced), leave applied patches that are not among I(recipes) applied
        (C(sitepatch sync --keep-others)).
    type: bool
    default: false
  venv:
    description:
      - The environment on the host (its root or its Python executable).
      - Defaults to the host variable C(sitepatch_venv).
    type: str
  force:
    description:
      - C(sitepatch apply --force)
        (ignore C(requires:) and C(on-upgrade:), accept new code using names the module never binds).
    type: bool
    default: false
  system:
    description:
      - C(sitepatch apply --system) (write into folders the environment shares but does not own).
    type: bool
    default: false
  check_command:
    description:
      - C(sitepatch apply --check-with), with C(state=present). A command run on the host
        after the write (C(sh -c), the environment's C(bin) first on C(PATH)), such as a
        smoke test or the model server's warm-up. If it fails, that host's apply is rolled
        back (pip's bytes again, the history keeping both) and its task fails with the
        command's output; the other hosts go on.
      - Not run in check mode.
    type: str
  state_dir:
    description: C(sitepatch --state-dir), where the history is kept on the host.
    type: str
  lock_timeout:
    description: Seconds to wait for another sitepatch working on the same environment.
    type: int
  executable:
    description:
      - The sitepatch binary on the controller.
      - Defaults to the variable C(sitepatch_executable), else C(sitepatch) in C(PATH).
    type: str
notes:
  - The ssh client runs with C(BatchMode=yes); password authentication is not supported
    (use a key or an ssh agent), and neither is C(become).
  - Supports C(check_mode) and C(diff_mode).
author:
  - sitepatch developers
seealso:
  - module: sitepatch.fleet.sitepatch_info
'''

EXAMPLES = r'''
- name: Apply the FlashInfer fix
  sitepatch.fleet.sitepatch:
    recipes:
      - recipes/flashinfer-dynamo.yaml
    venv: /srv/model/.venv

- name: Roll it back everywhere
  sitepatch.fleet.sitepatch:
    recipes:
      - recipes/flashinfer-dynamo.yaml
    state: absent

- name: Preview only (same as running the playbook with --check --diff)
  sitepatch.fleet.sitepatch:
    recipes: [recipes/flashinfer-dynamo.yaml]
  check_mode: true
  diff: true
'''

RETURN = r'''
files:
  description: The files changed (or, in check mode, that would change), relative to site-packages.
  returned: success
  type: list
  elements: str
  sample: [flashinfer/jit/cpp_ext.py]
written:
  description: Whether sitepatch wrote anything; C(changed) is this value (in check mode, whether files would change).
  returned: success
  type: bool
commit:
  description: The history commit sitepatch made on the host, empty when nothing was written.
  returned: success
  type: str
edits:
  description: One entry per edit with its C(state) (C(will apply), C(already applied), C(skipped), C(fails)), as in C(sitepatch plan --json).
  returned: success and state=present
  type: list
  elements: dict
distributions:
  description: C(name==version) of each distribution whose files changed.
  returned: success and state=present
  type: list
  elements: str
steps:
  description: With C(state=synced), one entry per recipe and per applied patch outside them, as in C(sitepatch sync --json) (C(id), C(step), C(why), C(recipe)).
  returned: success and state=synced
  type: list
  elements: dict
ids:
  description: The patch ids rolled back.
  returned: success and state=absent
  type: list
  elements: str
pyc_removed:
  description: The C(__pycache__) entries removed.
  returned: success
  type: list
  elements: str
notes:
  description: What sitepatch noted (a recovered interrupted write, an upgrade).
  returned: success
  type: list
  elements: str
cmd:
  description: The sitepatch command line run on the controller.
  returned: always
  type: list
  elements: str
rc:
  description: sitepatch's exit code (1 failed and nothing changed, 2 bad usage or recipe, 4 a write failed part way).
  returned: always
  type: int
msg:
  description: sitepatch's own error message.
  returned: failure
  type: str
'''

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec=dict(), supports_check_mode=True, bypass_checks=True)
    module.fail_json(msg='sitepatch.fleet.sitepatch runs on the controller through its action plugin')


if __name__ == '__main__':
    main()
