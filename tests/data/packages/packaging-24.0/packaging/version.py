"""A stand-in for packaging.version with the little the demo package uses."""
import functools


@functools.total_ordering
class Version:
    def __init__(self, text):
        self.release = tuple(int(p) for p in str(text).split("."))

    def __str__(self):
        return ".".join(str(p) for p in self.release)

    def __repr__(self):
        return f"<Version('{self}')>"

    def __eq__(self, other):
        return self.release == Version(other).release

    def __lt__(self, other):
        return self.release < Version(other).release
