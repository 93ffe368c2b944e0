"""xlingua: multilingual sentence embeddings in one vector space."""
from xlingua.encoders.base import Encoder
from xlingua.encoders.loading import load_encoder

__version__ = "0.1.0"
__all__ = ["Encoder", "load_encoder", "__version__"]
