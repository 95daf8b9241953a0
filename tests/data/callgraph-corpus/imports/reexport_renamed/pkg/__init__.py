from ._impl import _hidden as public
