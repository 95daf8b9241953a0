import asyncio

async def fetch(i):
    return i

async def runner():
    return await asyncio.gather(fetch(1), fetch(2))

asyncio.run(runner())
