"""unseen20p: import-only stand-in (RelativisticGAN's pytorch_visualize.py imports Digraph; --show_graph stays off)."""


class Digraph:
    def __init__(self, *a, **k):
        raise RuntimeError("graphviz stand-in: Digraph is not available in the corpus runs")
