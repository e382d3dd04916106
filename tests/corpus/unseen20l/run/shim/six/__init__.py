"""unseen20i: stand-in for six (not installed): six.moves.urllib only (Omniglot download() imports it before it
checks that the data exists; the runs never download)."""
