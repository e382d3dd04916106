"""``python -m ddpify`` is the ``ddpify`` command."""

from ddpify.cli import main

if __name__ == "__main__":
    main(prog_name="ddpify")
