import sys
from . import flags


def run(main, argv=None):
    argv = flags.FLAGS(sys.argv if argv is None else argv)
    sys.exit(main(argv))
