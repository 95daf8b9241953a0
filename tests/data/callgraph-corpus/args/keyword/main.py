def on_done():
    print("done")

def on_fail():
    print("fail")

def run(ok, success, failure):
    if ok:
        success()
    else:
        failure()

run(failure=on_fail, success=on_done, ok=True)
