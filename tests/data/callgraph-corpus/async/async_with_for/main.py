import asyncio

class Conn:
    async def __aenter__(self):
        return self

    async def __aexit__(self, *a):
        return False

class Rows:
    def __init__(self):
        self.n = 1

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.n == 0:
            raise StopAsyncIteration
        self.n -= 1
        return self.n

async def amain():
    async with Conn():
        async for _ in Rows():
            pass

asyncio.run(amain())
