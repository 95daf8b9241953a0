def stale():
    pass

def fresh():
    pass

fn = stale
fn = fresh
fn()
