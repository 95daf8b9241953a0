from typing import Optional

class Hook:
    def fire(self):
        pass

def run(hook: Optional[Hook] = None):
    if hook is not None:
        hook.fire()

run(Hook())
