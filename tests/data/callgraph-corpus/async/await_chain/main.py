import asyncio

async def fetch():
    return 1

async def handle():
    return await fetch()

async def amain():
    await handle()

asyncio.run(amain())
