"""unseen20q: nltk.translate stand-in (Show-Attend-and-Tell train.py imports nltk.translate.bleu_score)."""
