class Tokenizer:
    def encode(self, s):
        return [s]

def prepare(tok: Tokenizer, text: str):
    return tok.encode(text)

prepare(Tokenizer(), "hi")
