class Model:
    def name(self):
        return "heavy"
