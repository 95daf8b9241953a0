class Store:
    def save(self):
        pass

class Repo:
    def connect(self):
        self.store = Store()

    def commit(self):
        self.store.save()

r = Repo()
r.connect()
r.commit()
