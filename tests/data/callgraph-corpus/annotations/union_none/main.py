class Session:
    def close(self):
        pass

def open_session(ok: bool) -> Session | None:
    return Session() if ok else None

s = open_session(True)
if s:
    s.close()
