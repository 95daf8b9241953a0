def handle():
    pass
