from .circle_b import spin
