#!/usr/bin/python
# The documentation of the sitepatch_info task; the work is done by the action plugin of
# the same name, on the controller.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: sitepatch_info
short_description: Which sitepatch patches a host's Python environment holds, and which need reapplying
version_added: 1.0.0
description:
  - Runs C(sitepatch status --json) on the controller against the host's environment,
    reaching it as M(sitepatch.fleet.sitepatch) does, and returns the answer as data;
    register it and use it in C(when:) and in reports (which hosts need reapplying after
    a C(pip install -U)).
  - Reads only; never reports C(changed), and runs in check mode too.
options:
  venv:
    description:
      - The environment on the host. Defaults to the host variable C(sitepatch_venv).
    type: str
  state_dir:
    description: C(sitepatch --state-dir), where the history is kept on the host.
    type: str
  lock_timeout:
    description: Seconds to wait for another sitepatch writing the same environment.
    type: int
  executable:
    description:
      - The sitepatch binary on the controller.
      - Defaults to the variable C(sitepatch_executable), else C(sitepatch) in C(PATH).
    type: str
notes:
  - Supports C(check_mode).
author:
  - sitepatch developers
seealso:
  - module: sitepatch.fleet.sitepatch
'''

EXAMPLES = r'''
- name: Read what is applied
  sitepatch.fleet.sitepatch_info:
  register: patches

- name: Put back what an upgrade took away
  sitepatch.fleet.sitepatch:
    recipes: [recipes/flashinfer-dynamo.yaml]
  when: patches.needs_reapply | length > 0
'''

RETURN = r'''
environment:
  description: The environment's prefix on the host.
  returned: success
  type: str
intact:
  description: Whether every applied patch is as sitepatch left it.
  returned: success
  type: bool
applied:
  description: The ids of the patches the history holds.
  returned: success
  type: list
  elements: str
needs_attention:
  description: The ids whose advice is not C(ok).
  returned: success
  type: list
  elements: str
needs_reapply:
  description: The ids an upgrade (or anyone) took away, to apply again.
  returned: success
  type: list
  elements: str
  sample: [flashinfer-dynamo]
commands:
  description: The sitepatch command that fixes each patch needing attention.
  returned: success
  type: list
  elements: str
patches:
  description: C(sitepatch status --json)'s patches, each with C(id), C(state), C(advice), C(command), C(distribution) and C(files).
  returned: success
  type: list
  elements: dict
rc:
  description: sitepatch's exit code (0 all intact, 3 something needs attention).
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
    module.fail_json(msg='sitepatch.fleet.sitepatch_info runs on the controller through its action plugin')


if __name__ == '__main__':
    main()
