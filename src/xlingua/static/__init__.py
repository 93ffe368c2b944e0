"""Static encoders (xlingua.encoders.static): token vectors taken from a teacher, the way
model2vec distils them (Tulkens & van Dongen 2024), then trained on parallel pairs with the
translation ranking loss so that a sentence and its translation land together."""
