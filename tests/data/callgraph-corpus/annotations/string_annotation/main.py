def use(c: "Client"):
    c.send()

class Client:
    def send(self):
        pass

use(Client())
