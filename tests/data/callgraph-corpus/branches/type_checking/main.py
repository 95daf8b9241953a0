from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from heavy import Model

def describe(m: "Model"):
    return m.name()

class Lite:
    def name(self):
        return "lite"

describe(Lite())
