#!/usr/bin/python3
"""The collection's runner on the controller, without a play: the parts a play's forks
run at the same moment. Runs under the Python that runs Ansible (/usr/bin/python3)."""
import multiprocessing
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'ansible', 'plugins',
                                'plugin_utils'))
import runner  # noqa: E402


class Connection:
    """What the runner asks of Ansible's ssh connection: its options."""

    def __init__(self, control_path_dir):
        self.options = {'control_path_dir': control_path_dir}

    def get_option(self, name):
        return self.options.get(name)


PERSIST = ['-o', 'ControlMaster=auto', '-o', 'ControlPersist=60s']


def control_path_in_fork(directory, barrier, results):
    barrier.wait()
    try:
        runner._control_path(Connection(directory), '10.0.0.1', None, 'root', PERSIST)
        results.put(None)
    except Exception as e:  # what a fork would have failed its task with
        results.put(repr(e))


class ControlPath(unittest.TestCase):
    def test_folder_made_by_another_fork_in_between(self):
        # Another fork makes the folder between this one's look and its own mkdir.
        with tempfile.TemporaryDirectory() as tmp:
            directory = os.path.join(tmp, 'cp')
            real = os.makedirs

            def raced(path, *args, **kwargs):
                real(path)
                return real(path, *args, **kwargs)

            with mock.patch.object(runner.os, 'makedirs', raced):
                path = runner._control_path(Connection(directory), '10.0.0.1', None, 'root', PERSIST)
            self.assertEqual(os.path.dirname(path), directory)

    def test_eight_forks_at_once_on_a_new_folder(self):
        failures = []
        for _ in range(10):
            with tempfile.TemporaryDirectory() as tmp:
                directory = os.path.join(tmp, 'cp')
                barrier, results = multiprocessing.Barrier(8), multiprocessing.Queue()
                forks = [multiprocessing.Process(target=control_path_in_fork, args=(directory, barrier, results))
                         for _ in range(8)]
                for f in forks:
                    f.start()
                failures += [r for r in (results.get(timeout=30) for _ in forks) if r]
                for f in forks:
                    f.join()
                self.assertEqual(os.stat(directory).st_mode & 0o777, 0o700)
        self.assertEqual(failures, [])

    def test_no_socket_without_control_persist(self):
        self.assertIsNone(runner._control_path(Connection('/nonexistent'), 'h', None, 'u', ['-o', 'Compression=yes']))
        self.assertIsNone(runner._control_path(Connection('/nonexistent'), 'h', None, 'u',
                                               PERSIST + ['-o', 'ControlPath=/x/%C']))


if __name__ == '__main__':
    unittest.main()
