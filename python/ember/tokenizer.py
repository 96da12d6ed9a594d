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
from typing import AbstractSet, Collection, Dict, List, Literal, Optional, Sequence, Tuple, Union

from ember import _ember

__all__ = ["Encoding", "encoding_for_model", "encoding_name_for_model", "get_encoding", "list_encoding_names"]


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
    return Encoding._wrap(_ember.load_encoding(name, vocab_dir))


def get_encoding(encoding_name: str, vocab_dir: Optional[str] = None) -> "Encoding":
    """One of tiktoken's encodings (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base,
    o200k_base, o200k_harmony), loaded once per process. ValueError for an unknown name;
    FileNotFoundError when the vocabulary files are missing (run ./setup.sh)."""
    if encoding_name not in _ember.encoding_names():
        raise ValueError(f"Unknown encoding {encoding_name}; known: "
                         + ", ".join(_ember.encoding_names()))
    return _load(encoding_name, vocab_dir or _default_vocab_dir())


# tiktoken's table of which encoding each OpenAI model uses: whole names, then prefixes
# (a dated or fine-tuned variant of a model takes its family's encoding).
MODEL_TO_ENCODING = {
    **dict.fromkeys(["o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"], "o200k_base"),
    **dict.fromkeys(["gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo", "davinci-002", "babbage-002",
                     "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large"], "cl100k_base"),
    **dict.fromkeys(["text-davinci-003", "text-davinci-002", "code-davinci-002", "code-davinci-001",
                     "code-cushman-002", "code-cushman-001", "davinci-codex", "cushman-codex"], "p50k_base"),
    **dict.fromkeys(["text-davinci-edit-001", "code-davinci-edit-001"], "p50k_edit"),
    **dict.fromkeys(["text-davinci-001", "text-curie-001", "text-babbage-001", "text-ada-001", "davinci", "curie",
                     "babbage", "ada", "text-similarity-davinci-001", "text-similarity-curie-001",
                     "text-similarity-babbage-001", "text-similarity-ada-001", "text-search-davinci-doc-001",
                     "text-search-curie-doc-001", "text-search-babbage-doc-001", "text-search-ada-doc-001",
                     "code-search-babbage-code-001"], "r50k_base"),
    "gpt2": "gpt2", "gpt-2": "gpt2",
}
MODEL_PREFIX_TO_ENCODING = {
    **dict.fromkeys(["o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-", "gpt-4o-",
                     "ft:gpt-4o"], "o200k_base"),
    **dict.fromkeys(["gpt-4-", "gpt-3.5-turbo-", "gpt-35-turbo-", "ft:gpt-4", "ft:gpt-3.5-turbo", "ft:davinci-002",
                     "ft:babbage-002"], "cl100k_base"),
    "gpt-oss-": "o200k_harmony",
}


def encoding_name_for_model(model_name: str) -> str:
    """The name of the encoding OpenAI's model uses (tiktoken's table); KeyError for a
    model it does not know."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        if model_name.startswith(prefix):
            return name
    raise KeyError(f"Could not automatically map {model_name} to a tokeniser. "
                   "Please use `tiktoken.get_encoding` to explicitly get the tokeniser you expect.")


def encoding_for_model(model_name: str) -> "Encoding":
    """get_encoding(encoding_name_for_model(model_name))."""
    return get_encoding(encoding_name_for_model(model_name))


def _valid(text: str) -> str:
    # Lone surrogates cannot be UTF-8; tiktoken replaces them the same way.
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Encoding:
    """A tiktoken Encoding: encode, encode_ordinary, encode_batch, decode and friends,
    with tiktoken's arguments and errors. Made by get_encoding, or from a vocabulary as
    tiktoken's: Encoding(name, pat_str=..., mergeable_ranks={bytes: rank},
    special_tokens={text: id}). Pickles as its name (a registered encoding) or its
    vocabulary."""

    def __init__(self, name: str, *, pat_str: str, mergeable_ranks: Dict[bytes, int],
                 special_tokens: Dict[str, int], explicit_n_vocab: Optional[int] = None):
        if explicit_n_vocab is not None:
            if len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab:
                raise ValueError(f"Encoding {name}: {len(mergeable_ranks)} mergeable and {len(special_tokens)} "
                                 f"special tokens, not explicit_n_vocab={explicit_n_vocab}")
        self._set_core(_ember.make_encoding(name, pat_str, dict(mergeable_ranks), dict(special_tokens)))
        if explicit_n_vocab is not None and self.max_token_value != explicit_n_vocab - 1:
            raise ValueError(f"Encoding {name}: the largest id is {self.max_token_value}, not "
                             f"explicit_n_vocab - 1 = {explicit_n_vocab - 1}")

    @classmethod
    def _wrap(cls, core) -> "Encoding":
        encoding = cls.__new__(cls)
        encoding._set_core(core)
        encoding._registered = True
        return encoding

    def _set_core(self, core):
        self._core = core
        self._special_tokens = core.special_tokens
        self._registered = False

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"

    def __getstate__(self):
        if self._registered:
            return self.name
        return {"name": self.name, "pat_str": self._pat_str, "mergeable_ranks": self._mergeable_ranks,
                "special_tokens": self._special_tokens}

    def __setstate__(self, state):
        if isinstance(state, str):
            self._set_core(get_encoding(state)._core)
            self._registered = True
        else:
            self.__init__(**state)

    @property
    def name(self) -> str:
        return self._core.name

    @property
    def _pat_str(self) -> str:
        return self._core.pattern

    @property
    def _mergeable_ranks(self) -> Dict[bytes, int]:
        return self._core.mergeable_ranks

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

    def is_special_token(self, token: int) -> bool:
        return token in self._special_tokens.values()

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

    def encode_to_numpy(self, text: str, *, allowed_special: Union[Literal["all"], AbstractSet[str]] = set(),
                        disallowed_special: Union[Literal["all"], Collection[str]] = "all"):
        """encode's ids as a NumPy uint32 array."""
        import numpy as np
        return np.array(self.encode(text, allowed_special=allowed_special,
                                    disallowed_special=disallowed_special), dtype=np.uint32)

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of one token given as its text or bytes (a special token by its text);
        KeyError if it is not a single token."""
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        rank = self._core.rank_of(data)
        if rank is not None:
            return rank
        special = data.decode("utf-8", errors="replace")
        if special in self._special_tokens and special.encode("utf-8") == data:
            return self._special_tokens[special]
        raise KeyError(text_or_bytes)

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The tokens' bytes, concatenated; KeyError for an id that is no token."""
        return self._decoded(self._core.decode_bytes, tokens)

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The tokens' text; bytes that are not UTF-8 are decoded with `errors`
        ("replace" by default, as tiktoken); KeyError for an id that is no token."""
        if errors == "replace":
            return self._decoded(self._core.decode, tokens)
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    @staticmethod
    def _decoded(decode, tokens):
        try:
            return decode(list(tokens))
        except ValueError as e:  # an unknown id: tiktoken's KeyError
            raise KeyError(str(e)) from None

    def decode_single_token_bytes(self, token: int) -> bytes:
        return self.decode_bytes([token])

    def decode_tokens_bytes(self, tokens: Sequence[int]) -> list:
        return [self.decode_bytes([t]) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> Tuple[str, List[int]]:
        """The text (strict UTF-8) and, for each token, the index of the character in
        which it starts: characters are counted by their UTF-8 lead bytes, and a token
        that starts inside a character starts at that character."""
        pieces = self.decode_tokens_bytes(tokens)
        offsets, characters = [], 0
        for piece in pieces:
            inside = bool(piece) and 0x80 <= piece[0] < 0xC0  # begins with a continuation byte
            offsets.append(max(0, characters - inside))
            characters += sum(1 for byte in piece if not 0x80 <= byte < 0xC0)
        return b"".join(pieces).decode("utf-8", errors="strict"), offsets

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace",
                     num_threads: int = 8) -> list:
        """decode of each list of ids (in this thread: decoding is a copy of bytes, so
        num_threads, a hint in tiktoken too, changes nothing)."""
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list:
        """decode_bytes of each list of ids (num_threads as in decode_batch)."""
        return [self.decode_bytes(tokens) for tokens in batch]

    def token_byte_values(self) -> list:
        """Every mergeable token's bytes, sorted."""
        return self._core.token_byte_values()
