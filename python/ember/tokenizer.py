"""tiktoken's API over ember's tokenizer: the same encodings, the same ids, the same
errors, so that `import ember.tokenizer as tiktoken` is the whole change.

    enc = ember.tokenizer.get_encoding("o200k_base")
    ids = enc.encode("hello <|endoftext|>", allowed_special="all")
    enc.decode(ids)

The vocabulary files come from the folder given to get_encoding(vocab_dir=...), else
$EMBER_VOCAB_DIR, else the downloads/tokenizer folder that ./setup.sh fills in the
ember checkout this package lives in.
"""

import functools
import os
from typing import AbstractSet, Collection, Literal, Optional, Sequence, Union

from ember import _ember

__all__ = ["Encoding", "get_encoding", "list_encoding_names"]


def _default_vocab_dir() -> str:
    env = os.environ.get("EMBER_VOCAB_DIR")
    if env:
        return env
    # python/ember/tokenizer.py -> the checkout's root
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "downloads", "tokenizer")


def list_encoding_names() -> list:
    """The names get_encoding accepts, as tiktoken.list_encoding_names()."""
    return list(_ember.encoding_names())


@functools.lru_cache(maxsize=None)
def _load(name: str, vocab_dir: str) -> "Encoding":
    return Encoding(_ember.load_encoding(name, vocab_dir))


def get_encoding(encoding_name: str, vocab_dir: Optional[str] = None) -> "Encoding":
    """One of tiktoken's encodings (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base,
    o200k_base), loaded once per process. ValueError for an unknown name;
    FileNotFoundError when the vocabulary files are missing (run ./setup.sh)."""
    if encoding_name not in _ember.encoding_names():
        raise ValueError(f"Unknown encoding {encoding_name}; known: "
                         + ", ".join(_ember.encoding_names()))
    return _load(encoding_name, vocab_dir or _default_vocab_dir())


def _valid(text: str) -> str:
    # Lone surrogates cannot be UTF-8; tiktoken replaces them the same way.
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Encoding:
    """A tiktoken Encoding: encode, encode_ordinary, encode_batch, decode and friends,
    with tiktoken's arguments and errors."""

    def __init__(self, core):
        self._core = core
        self._special_tokens = core.special_tokens

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    @property
    def name(self) -> str:
        return self._core.name

    @property
    def n_vocab(self) -> int:
        return self._core.n_vocab

    @property
    def max_token_value(self) -> int:
        return self._core.n_vocab - 1

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    @property
    def special_tokens_set(self) -> set:
        return set(self._special_tokens)

    def _allowed(self, texts, allowed_special, disallowed_special) -> list:
        """The allowed specials as a list, after tiktoken's check that no text holds a
        disallowed one (ValueError with tiktoken's message naming the first)."""
        if allowed_special == "all":
            allowed_special = self.special_tokens_set
        if disallowed_special == "all":
            disallowed_special = self.special_tokens_set - set(allowed_special)
        for text in texts:
            found = [(text.find(token), token) for token in disallowed_special if token in text]
            if found:
                token = min(found)[1]
                raise ValueError(
                    f"Encountered text corresponding to disallowed special token {token!r}.\n"
                    "If you want this text to be encoded as a special token, "
                    f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
                    "If you want this text to be encoded as normal text, disable the check for this token "
                    f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
                    "To disable this check for all special tokens, pass `disallowed_special=()`.\n")
        return list(allowed_special)

    def encode(self, text: str, *, allowed_special: Union[Literal["all"], AbstractSet[str]] = set(),
               disallowed_special: Union[Literal["all"], Collection[str]] = "all") -> list:
        """The ids of `text`; special-token text becomes its id if allowed, is a
        ValueError if disallowed (by default: every special not allowed), and is
        ordinary text otherwise."""
        text = _valid(text)
        return self._core.encode(text, self._allowed([text], allowed_special, disallowed_special), [])

    def encode_ordinary(self, text: str) -> list:
        """The ids of `text`, special-token text encoded as ordinary text."""
        return self._core.encode_ordinary(_valid(text))

    def encode_batch(self, text: Sequence[str], *, num_threads: int = 8,
                     allowed_special: Union[Literal["all"], AbstractSet[str]] = set(),
                     disallowed_special: Union[Literal["all"], Collection[str]] = "all") -> list:
        """encode of each text, on num_threads threads (the GIL released)."""
        texts = [_valid(t) for t in text]
        allowed = self._allowed(texts, allowed_special, disallowed_special)
        return self._core.encode_batch(texts, allowed, [], num_threads)

    def encode_ordinary_batch(self, text: Sequence[str], *, num_threads: int = 8) -> list:
        """encode_ordinary of each text, on num_threads threads (the GIL released)."""
        return self._core.encode_batch([_valid(t) for t in text], [], [], num_threads)

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The tokens' bytes, concatenated."""
        return self._core.decode_bytes(list(tokens))

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The tokens' text; bytes that are not UTF-8 are decoded with `errors`
        ("replace" by default, as tiktoken)."""
        if errors == "replace":
            return self._core.decode(list(tokens))
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self._core.decode_bytes([token])

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list:
        return [self._core.decode_bytes([t]) for t in tokens]
