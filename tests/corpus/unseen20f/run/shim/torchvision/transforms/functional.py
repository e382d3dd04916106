def hflip(x): return x
def vflip(x): return x
