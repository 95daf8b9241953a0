# Runs the controller's sitepatch binary against one inventory host: the host's own
# connection settings become --host and --ssh-command, so sitepatch reaches the machine
# exactly as Ansible does (same user, port, key, ssh options, and the same
# ControlPersist socket: one handshake per host, whoever makes it first).
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os
import shlex
import subprocess

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text

SSH_CONNECTIONS = ('ssh', 'ansible.builtin.ssh', 'ansible.legacy.ssh')
LOCAL_CONNECTIONS = ('local', 'ansible.builtin.local', 'ansible.legacy.local')


def _option(connection, name, default=None):
    try:
        value = connection.get_option(name)
    except KeyError:
        return default
    return default if value is None else value


def _split(args):
    return shlex.split(args) if args else []


def _control_path(connection, host, port, user, ssh_words):
    """The socket Ansible's ssh plugin uses for this host, when ControlPersist is on."""
    lowered = [w.lower() for w in ssh_words]
    if not any('controlpersist' in w for w in lowered) or any('controlpath' in w for w in lowered):
        return None
    directory = os.path.expanduser(_option(connection, 'control_path_dir', '~/.ansible/cp'))
    # Every fork of a play runs this at once: the first to come makes the folder.
    os.makedirs(directory, 0o700, exist_ok=True)
    template = _option(connection, 'control_path')
    if not template:
        make = getattr(type(connection), '_create_control_path', None)
        if make is not None:
            template = make(host, port, user)
        else:  # the same digest ansible-core computes
            digest = hashlib.sha1(('%s-%s-%s' % (host, port, user)).encode()).hexdigest()
            template = '%(directory)s/' + digest[:10]
    return template % dict(directory=directory)


def refuse_become(task):
    if task.become:
        raise AnsibleError(
            "sitepatch connects as the host's ansible_user and does not use become: "
            'connect as a user who may write the environment, and set become: false on this task')


def target_of(connection, play_context):
    """(host argument, ssh command words) for sitepatch --host/--ssh-command; (None, None)
    for the local connection."""
    name = getattr(connection, 'transport', None) or getattr(connection, '_load_name', '')
    if name in LOCAL_CONNECTIONS:
        return None, None
    if name not in SSH_CONNECTIONS:
        raise AnsibleError(
            "sitepatch reaches hosts over ssh: the '%s' connection is not supported "
            "(use ansible_connection=ssh, or local for the controller itself)" % name)
    if _option(connection, 'password') or getattr(play_context, 'password', None):
        raise AnsibleError(
            'sitepatch runs ssh with BatchMode=yes and cannot type a password: '
            'use a key (ansible_ssh_private_key_file) or an ssh agent')
    host = _option(connection, 'host') or play_context.remote_addr
    port = _option(connection, 'port')
    user = _option(connection, 'remote_user')

    words = [_option(connection, 'ssh_executable', 'ssh')]
    words += _split(_option(connection, 'ssh_args'))
    if _option(connection, 'host_key_checking') is False:
        words += ['-o', 'StrictHostKeyChecking=no']
    key = _option(connection, 'private_key_file')
    if key:
        words += ['-o', 'IdentityFile=' + os.path.expanduser(key)]
    words += ['-o', 'KbdInteractiveAuthentication=no', '-o', 'PasswordAuthentication=no']
    words += ['-o', 'ConnectTimeout=%s' % _option(connection, 'timeout', 10)]
    words += _split(_option(connection, 'ssh_common_args'))
    words += _split(_option(connection, 'ssh_extra_args'))
    path = _control_path(connection, host, port, user, words)
    if path:
        words += ['-o', 'ControlPath=' + path]

    where = '[%s]' % host if ':' in host else host
    if user:
        where = '%s@%s' % (user, where)
    if port:
        where = '%s:%s' % (where, port)
    return where, words


def run(executable, globals_, command, args):
    """Runs `executable GLOBALS --json COMMAND ARGS`; returns (argv, rc, document, stderr).
    document is None when sitepatch printed no JSON (it could not start, say)."""
    argv = [executable] + globals_ + ['--json', '--color', 'never', command] + args
    env = dict(os.environ, NO_COLOR='1')
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, check=False)
    except OSError as e:
        raise AnsibleError(
            'cannot run sitepatch (%s): %s; install it on the controller or set '
            'sitepatch_executable' % (executable, to_text(e)))
    out, err = to_text(proc.stdout), to_text(proc.stderr)
    try:
        document = json.loads(out) if out.strip() else None
    except ValueError:
        document = None
    return argv, proc.returncode, document, err


def globals_for(host, ssh_words, venv, state_dir=None, lock_timeout=None):
    args = []
    if host:
        args += ['--host', host, '--ssh-command', ' '.join(shlex.quote(w) for w in ssh_words)]
    if venv:
        args += ['--venv', venv]
    if state_dir:
        args += ['--state-dir', state_dir]
    if lock_timeout is not None:
        args += ['--lock-timeout', str(lock_timeout)]
    return args


def failure(rc, document, stderr):
    """The result of a sitepatch that did not succeed: its own message and exit code."""
    lines = []
    error = (document or {}).get('error')
    if isinstance(error, dict) and error.get('message'):  # {"kind", "message", "diagnostics"}
        lines.append(error['message'])
    for edit in (document or {}).get('edits', []):
        if edit.get('state') == 'fails':
            lines.append('%s:%s:%s: %s  %s  %s: %s' % (
                edit.get('recipe_file'), edit.get('recipe_line'), edit.get('recipe_column'),
                edit.get('recipe'), edit.get('target'), edit.get('action'), edit.get('message')))
    lines += (document or {}).get('problems', [])
    check = (document or {}).get('check')
    if isinstance(check, dict) and not check.get('ok'):  # apply --check-with: rolled back
        lines.append('check failed: %s exited %s; the apply was rolled back on this host' % (
            check.get('what'), check.get('status')))
        output = (check.get('stdout') or '') + (check.get('stderr') or '')
        if output.strip():
            lines.append(output.rstrip())
    if not lines:
        lines = [line for line in stderr.splitlines() if line.strip()] or ['sitepatch failed']
    message = '\n'.join(lines)
    result = dict(failed=True, msg=message, rc=rc, stderr=stderr)
    # sitepatch's own words for an ssh that never got in: Ansible's unreachable.
    if message.startswith('cannot reach '):
        # failed=False: with a nonzero rc Ansible would count it failed instead.
        result.update(failed=False, unreachable=True)
    return result
