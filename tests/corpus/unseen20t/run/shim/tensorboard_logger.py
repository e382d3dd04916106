class Logger:
    def __init__(self, *a, **k): pass
    def log_value(self, *a, **k): pass
def configure(*a, **k): pass
def log_value(*a, **k): pass
