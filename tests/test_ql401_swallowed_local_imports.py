"""QL401's message on an old import in a function whose failure a `try` swallows.

Memeget's `_quantize_dynamic_int8` (corpus row, stop 65) warms up an older torchao with
`try: import torch.ao.quantization.quantizer.quantizer except ImportError: pass`. The import
makes `torch` a local name of the whole function, so on torch 2.13 (module gone) the swallowed
failure leaves it unbound and the next `torch.export` call raises UnboundLocalError, which is
what the user meets: the message says so. At module level, unguarded, with a handler that binds
the name or leaves, or with the name bound elsewhere in the function, it stays as it was.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

GONE = "is gone from torch 2.13: it is now `torchao.quantization.pt2e.quantizer.quantizer`"


def messages(src: str) -> list[tuple[int, str]]:
    return [(d.range.start.row, d.message) for d in lint(textwrap.dedent(src), select=("QL401",))]


def test_a_swallowed_import_in_a_function_names_the_unbound_use():
    ((row, message),) = messages(
        """\
        import torch


        def quantize(module, example_inputs):
            try:
                import torch.ao.quantization.quantizer.quantizer  # noqa: F401
            except ImportError:
                pass
            return torch.export.export(module, example_inputs).module()
        """
    )
    assert row == 6
    assert message == (
        f"`torch.ao.quantization.quantizer.quantizer` {GONE}; the `except` at line 7 swallows that failure"
        " and leaves `torch` unbound in `quantize` (this import makes it a local name there), so line 9 raises"
        " UnboundLocalError"
    )


def test_a_from_import_of_a_name_torch_ao_quantization_lost():
    # `from torch.ao.quantization import ...` raises ImportError (the module is there, the name
    # is not): a handler catching ImportError swallows it; the first name used is named.
    src = """\
        def to_eval(m):
            try:
                from torch.ao.quantization import allow_exported_model_train_eval, move_exported_model_to_eval
            except (ImportError, RuntimeError):
                print("old torch")
            m = move_exported_model_to_eval(m)
            return allow_exported_model_train_eval(m)
        """
    ((row, message),) = messages(src)
    assert row == 3
    assert message.endswith(
        "; the `except` at line 4 swallows that failure and leaves `move_exported_model_to_eval` unbound in"
        " `to_eval` (this import makes it a local name there), so line 6 raises UnboundLocalError"
    )


def test_a_use_in_the_handler_itself_is_the_next_use():
    ((_, message),) = messages(
        """\
        def quantize(module):
            try:
                import torch.ao.quantization.quantizer.quantizer as q
            except Exception:
                print(q)
            return module
        """
    )
    assert message.endswith("so line 5 raises UnboundLocalError")


def test_the_rest_of_the_try_body_and_its_else_do_not_run():
    ((_, message),) = messages(
        """\
        def quantize(module, x):
            try:
                import torch.ao.quantization.quantizer.quantizer as q
                q.touch()
            except ImportError:
                pass
            else:
                q.touch()
            def later():
                return q
            return q.run(module, x)
        """
    )
    assert message.endswith("so line 11 raises UnboundLocalError")


def plain(message: str) -> bool:
    return "UnboundLocalError" not in message and "swallows" not in message


def test_module_level_and_unguarded_imports_keep_their_message():
    found = messages(
        """\
        try:
            import torch.ao.quantization.quantizer.quantizer as q
        except ImportError:
            pass
        q.run()


        def quantize(module):
            import torch.ao.quantization.quantizer.quantizer as q2
            return q2.run(module)


        class Holder:
            try:
                import torch.ao.quantization.quantizer.quantizer as q3
            except ImportError:
                pass
            runner = q3.run
        """
    )
    assert [row for row, _ in found] == [2, 9, 15]
    assert all(plain(message) for _, message in found)


def test_a_name_the_failure_does_not_leave_unbound_keeps_the_message():
    found = messages(
        """\
        def bound_by_the_handler(module):
            try:
                from torch.ao.quantization.quantizer import Quantizer
            except ImportError:
                Quantizer = None
            return Quantizer


        def bound_before(module, Quantizer=None):
            try:
                from torch.ao.quantization.quantizer import Quantizer
            except ImportError:
                pass
            return Quantizer


        def the_handler_leaves(module):
            try:
                from torch.ao.quantization.quantizer import Quantizer
            except ImportError:
                return module
            return Quantizer(module)


        def a_global(module):
            global Quantizer
            try:
                from torch.ao.quantization.quantizer import Quantizer
            except ImportError:
                pass
            return Quantizer


        def never_used_again(module):
            try:
                from torch.ao.quantization.quantizer import Quantizer  # noqa: F401
            except ImportError:
                pass
            return module


        def only_a_closure_reads_it(module):
            try:
                from torch.ao.quantization.quantizer import Quantizer
            except ImportError:
                pass
            return lambda: Quantizer


        def not_caught_here(module):
            try:
                from torch.ao.quantization.quantizer import Quantizer
            except AttributeError:
                pass
            return Quantizer
        """
    )
    assert [row for row, _ in found] == [3, 11, 19, 28, 36, 44, 52]
    assert all(plain(message) for _, message in found)


def test_an_import_error_handler_does_not_catch_a_missing_module_only_when_narrower():
    # `from torch.ao.quantization.quantizer import X`: the module is gone, ModuleNotFoundError
    # (an ImportError); `from torch.ao.quantization import X`: ImportError alone, which an
    # `except ModuleNotFoundError:` lets through (the import raises, as the message says).
    found = messages(
        """\
        def module_gone(module):
            try:
                from torch.ao.quantization.quantizer import Quantizer
            except ModuleNotFoundError:
                pass
            return Quantizer(module)


        def name_gone(module):
            try:
                from torch.ao.quantization import move_exported_model_to_eval
            except ModuleNotFoundError:
                pass
            return move_exported_model_to_eval(module)
        """
    )
    assert [(row, "UnboundLocalError" in message) for row, message in found] == [(3, True), (11, False)]
