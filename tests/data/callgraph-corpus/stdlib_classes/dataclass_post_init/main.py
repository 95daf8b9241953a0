from dataclasses import dataclass, field

def empty_list():
    return []

@dataclass
class Config:
    name: str
    tags: list = field(default_factory=empty_list)

    def __post_init__(self):
        self.name = self.name.strip()

def build():
    return Config(" x ")

build()
