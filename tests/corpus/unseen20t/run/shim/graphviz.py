"""unseen20t: a recording Digraph (pt.darts visualize.plot draws each genotype every epoch): node / edge / attr and the
body list are kept; render(path) writes the DOT text to `path` and an empty `path.png`, as graphviz writes the source
and the picture (no dot binary here). (unseen20p: import-only; RelativisticGAN never drew.)"""


class Digraph:
    def __init__(self, *a, format="pdf", **k):
        self.format, self.body = format, []

    def node(self, name, label=None, **k):
        self.body.append("\t%s" % name)

    def edge(self, u, v, label=None, **k):
        self.body.append("\t%s -> %s [label=%s]" % (u, v, label))

    def attr(self, *a, **k):
        self.body.append("\t%s" % k)

    @property
    def source(self):
        return "digraph {\n" + "\n".join(self.body) + "\n}\n"

    def render(self, filename=None, view=False, **k):
        import os
        if os.path.dirname(filename):
            os.makedirs(os.path.dirname(filename), exist_ok=True)  # graphviz makes the folder, too
        with open(filename, "w") as f:
            f.write(self.source)
        open("%s.%s" % (filename, self.format), "wb").close()
        return "%s.%s" % (filename, self.format)
