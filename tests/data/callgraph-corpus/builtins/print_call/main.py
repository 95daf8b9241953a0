def message():
    return "hi"

print(message())
