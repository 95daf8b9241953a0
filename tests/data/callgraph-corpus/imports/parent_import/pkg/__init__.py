def shared():
    pass
