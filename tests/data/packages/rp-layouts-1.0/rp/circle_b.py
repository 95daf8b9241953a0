from .circle_a import spin
