device = None
