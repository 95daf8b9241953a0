import a

a.start()
