"""LASER (Artetxe & Schwenk 2019, "Massively Multilingual Sentence Embeddings for Zero-Shot
Cross-Lingual Transfer and Beyond"): a BiLSTM encoder with max-pooling, trained as the encoder
of a translation model whose decoder sees only the sentence embedding."""
