from pkg import api

api.run()
