class Bottom:
    def forward(self):
        return self.extra()

    def extra(self):
        return 0

class Middle(Bottom):
    def extra(self):
        return 1
