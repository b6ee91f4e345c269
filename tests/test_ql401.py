"""QL401 torch-ao-pt2e-import: what is flagged, what stays quiet, and what the fixes write."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import fix, lint, write_package

SEL = ("QL401",)


def ql401(src: str, **kw):
    return [d for d in lint(src, select=SEL, **kw) if d.code == "QL401"]


def spots(diagnostics) -> list[tuple[int, int]]:
    """Where the findings start (row, column): a count alone would not say which lines."""
    return [(d.range.start.row, d.range.start.col) for d in diagnostics]


def fixed(src: str, unsafe: bool = False, **kw) -> str:
    out = fix(src, select=SEL, unsafe=unsafe, **kw)
    ast.parse(out)
    return out


def dedent(src: str) -> str:
    return textwrap.dedent(src)


# -- from-imports ---------------------------------------------------------------------------
def test_from_removed_module_rewrites_the_module_path_only():
    src = "from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: F401\n"
    (d,) = ql401(src)
    assert d.fix.applicability is Applicability.SAFE
    assert "torchao.quantization.pt2e.quantize_pt2e" in d.message
    assert fixed(src) == (
        "from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: F401\n"
    )


def test_parenthesized_multiline_import_keeps_comments_and_layout():
    src = dedent(
        """\
        from torch.ao.quantization.quantize_pt2e import (  # the PT2E entry points
            convert_pt2e,  # after calibration
            prepare_pt2e,
        )
        """
    )
    assert fixed(src) == src.replace("torch.ao.quantization.quantize_pt2e", "torchao.quantization.pt2e.quantize_pt2e")


def test_moved_names_leave_eager_names_in_place_single_line():
    src = "from torch.ao.quantization import MinMaxObserver, move_exported_model_to_eval, prepare\n"
    (d,) = ql401(src)
    assert "`move_exported_model_to_eval`" in d.message and "MinMaxObserver" not in d.message
    assert fixed(src) == (
        "from torch.ao.quantization import MinMaxObserver, prepare\n"
        "from torchao.quantization.pt2e import move_exported_model_to_eval\n"
    )


def test_moved_names_leave_eager_names_in_place_one_per_line():
    src = dedent(
        """\
        def f():
            from torch.ao.quantization import (
                MinMaxObserver,
                allow_exported_model_train_eval,  # QAT helper
                move_exported_model_to_train,
                prepare,
            )
        """
    )
    assert fixed(src) == dedent(
        """\
        def f():
            from torch.ao.quantization import (
                MinMaxObserver,
                prepare,
            )
            from torchao.quantization.pt2e import (
                allow_exported_model_train_eval,  # QAT helper
                move_exported_model_to_train,
            )
        """
    )


def test_names_moving_to_different_packages_are_split():
    src = "from torch.ao.quantization.quantizer import Quantizer, XNNPACKQuantizer, QuantizationSpec\n"
    assert fixed(src) == (
        "from torchao.quantization.pt2e.quantizer import Quantizer, QuantizationSpec\n"
        "from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer\n"
    )


def test_submodule_imported_by_name_and_aliased():
    src = dedent(
        """\
        from torch.ao.quantization import quantize_pt2e as qp
        from torch.ao.quantization.pt2e import representation

        m = qp.prepare_pt2e(m, quantizer)
        m = representation.reference_representation_rewrite(qp.convert_pt2e(m))
        """
    )
    assert fixed(src) == dedent(
        """\
        from torchao.quantization.pt2e import quantize_pt2e as qp
        from torchao.quantization.pt2e import reference_representation_rewrite as representation

        m = qp.prepare_pt2e(m, quantizer)
        m = representation.reference_representation_rewrite(qp.convert_pt2e(m))
        """
    )


def test_renamed_private_helper_is_an_unsafe_fix_keeping_the_local_name():
    src = "from torch.ao.quantization.quantizer.utils import _annotate_input_qspec_map\n"
    (d,) = ql401(src)
    assert d.fix.applicability is Applicability.UNSAFE
    assert fixed(src) == src
    assert fixed(src, unsafe=True) == (
        "from torchao.quantization.pt2e.quantizer.utils import annotate_input_qspec_map as _annotate_input_qspec_map\n"
    )


def test_long_new_statement_is_wrapped():
    src = dedent(
        """\
        from torch.ao.quantization import (
            MinMaxObserver,
            compare_results,
            extract_results_from_loggers,
            generate_numeric_debug_handle,
            prepare_for_propagation_comparison,
        )
        """
    )
    out = fixed(src)
    assert "from torchao.quantization.pt2e import (\n    compare_results,\n" in out
    assert out.startswith("from torch.ao.quantization import (\n    MinMaxObserver,\n)\n")


# -- import <module> -----------------------------------------------------------------------
def test_import_as_alias_rebinds_the_alias():
    src = dedent(
        """\
        import torch.ao.quantization.quantize_pt2e as qp

        m = qp.convert_pt2e(qp.prepare_pt2e(m, quantizer))
        """
    )
    (d,) = ql401(src)
    assert d.range.start.row == 1 and d.range.start.col == 7
    assert fixed(src) == src.replace("torch.ao.quantization.quantize_pt2e", "torchao.quantization.pt2e.quantize_pt2e")


def test_import_as_alias_with_a_use_that_moved_elsewhere_is_display_only():
    src = dedent(
        """\
        import torch.ao.quantization.quantizer as q

        quantizer = q.XNNPACKQuantizer()
        """
    )
    (d,) = ql401(src)
    assert d.fix.applicability is Applicability.DISPLAY_ONLY
    assert fixed(src, unsafe=True) == src


def test_plain_import_rewrites_import_and_uses_and_keeps_torch_bound():
    src = dedent(
        """\
        import torch.ao.quantization.quantize_pt2e

        m = torch.ao.quantization.quantize_pt2e.prepare_pt2e(m, quantizer)
        x = torch.randn(2)
        """
    )
    assert spots(ql401(src)) == [(1, 7)]
    assert fixed(src) == dedent(
        """\
        import torch
        import torchao.quantization.pt2e.quantize_pt2e

        m = torchao.quantization.pt2e.quantize_pt2e.prepare_pt2e(m, quantizer)
        x = torch.randn(2)
        """
    )


def test_plain_import_does_not_add_torch_when_bound_elsewhere_or_unused():
    src = dedent(
        """\
        import torch
        import torch.ao.quantization.quantize_pt2e

        m = torch.ao.quantization.quantize_pt2e.convert_pt2e(m)
        x = torch.randn(2)
        """
    )
    assert fixed(src).count("import torch\n") == 1
    alone = "import torch.ao.quantization.quantize_pt2e\nm = torch.ao.quantization.quantize_pt2e.convert_pt2e(m)\n"
    assert fixed(alone) == (
        "import torchao.quantization.pt2e.quantize_pt2e\nm = torchao.quantization.pt2e.quantize_pt2e.convert_pt2e(m)\n"
    )


# -- attribute uses through `import torch` -------------------------------------------------
def test_attribute_uses_are_rewritten_and_the_import_added_once():
    src = dedent(
        '''\
        """Calibrate and convert."""
        import torch


        def finish(m):
            torch.ao.quantization.move_exported_model_to_eval(m)
            torch.ao.quantization.allow_exported_model_train_eval(m)
            return torch.ao.quantization.quantize_pt2e.convert_pt2e(m)
        '''
    )
    assert spots(ql401(src)) == [(6, 4), (7, 4), (8, 11)]
    assert fixed(src) == dedent(
        '''\
        """Calibrate and convert."""
        import torch
        import torchao.quantization.pt2e
        import torchao.quantization.pt2e.quantize_pt2e


        def finish(m):
            torchao.quantization.pt2e.move_exported_model_to_eval(m)
            torchao.quantization.pt2e.allow_exported_model_train_eval(m)
            return torchao.quantization.pt2e.quantize_pt2e.convert_pt2e(m)
        '''
    )


def test_attribute_use_through_an_alias_of_the_package():
    src = dedent(
        """\
        import torch.ao.quantization as tq
        from torch.ao import quantization

        tq.move_exported_model_to_eval(m)
        quantization.move_exported_model_to_train(m)
        tq.prepare(m)
        """
    )
    ds = ql401(src)
    assert [d.range.start.row for d in ds] == [4, 5]
    out = fixed(src)
    assert "torchao.quantization.pt2e.move_exported_model_to_eval(m)" in out
    assert "torchao.quantization.pt2e.move_exported_model_to_train(m)" in out
    assert "tq.prepare(m)" in out


def test_isinstance_against_a_removed_class_is_only_an_unsafe_fix():
    src = "import torch\nok = isinstance(q, torch.ao.quantization.quantizer.Quantizer)\n"
    (d,) = ql401(src)
    assert d.fix.applicability is Applicability.UNSAFE


# -- torch.ao observers move with the quantizer API ----------------------------------------
def test_quantizer_api_moving_next_to_torch_ao_observers_takes_them_along_unsafely():
    src = dedent(
        """\
        from torch.ao.quantization.observer import HistogramObserver, default_observer
        from torch.ao.quantization.quantizer import QuantizationSpec

        SPEC = QuantizationSpec(dtype=torch.int8, observer_or_fake_quant_ctr=HistogramObserver)
        """
    )
    (d,) = ql401(src)
    assert d.fix.applicability is Applicability.UNSAFE
    assert "`HistogramObserver`" in d.help and "does not insert" in d.help
    assert fixed(src) == src
    assert fixed(src, unsafe=True) == dedent(
        """\
        from torch.ao.quantization.observer import default_observer
        from torchao.quantization.pt2e import HistogramObserver
        from torchao.quantization.pt2e.quantizer import QuantizationSpec

        SPEC = QuantizationSpec(dtype=torch.int8, observer_or_fake_quant_ctr=HistogramObserver)
        """
    )


def test_observers_do_not_matter_for_names_that_take_none():
    src = "from torch.ao.quantization import MinMaxObserver, move_exported_model_to_eval\n"
    (d,) = ql401(src)
    assert d.fix.applicability is Applicability.SAFE and "observers" not in d.message


# -- quiet ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "src",
    [
        "from torch.ao.quantization import MinMaxObserver, QConfig, convert, prepare\n",
        "import torch\nobs = torch.ao.quantization.MinMaxObserver()\n",
        "import torch\nh = torch.ao.quantization.observer.HistogramObserver\n",
        "from torch.ao.quantization.observer import MinMaxObserver\n",
        "from torch.ao.quantization.quantize_fx import prepare_fx\n",
        "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n",
        'PATH = "torch.ao.quantization.quantize_pt2e.prepare_pt2e"\n',
        # compatibility shims, in both orders
        dedent(
            """\
            try:
                from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
            except ImportError:
                from torch.ao.quantization.quantize_pt2e import prepare_pt2e
            """
        ),
        dedent(
            """\
            try:
                from torch.ao.quantization.quantize_pt2e import prepare_pt2e
            except (ImportError, AttributeError):
                from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
            """
        ),
        dedent(
            """\
            try:
                import torch.ao.quantization.quantize_pt2e as qp
            except ModuleNotFoundError:
                import torchao.quantization.pt2e.quantize_pt2e as qp
            qp.prepare_pt2e(m, q)
            """
        ),
        dedent(
            """\
            if TORCH_VERSION_AT_LEAST_2_7:
                from torchao.quantization.pt2e import move_exported_model_to_eval
            else:
                from torch.ao.quantization import move_exported_model_to_eval
            """
        ),
        dedent(
            """\
            import torch
            if torch.__version__ < "2.6":
                from torch.ao.quantization.quantizer import Quantizer
            """
        ),
        dedent(
            """\
            import torch
            try:
                to_eval = torch.ao.quantization.move_exported_model_to_eval
            except AttributeError:
                to_eval = None
            """
        ),
    ],
)
def test_quiet(src):
    assert ql401(src) == []


def test_fallback_that_only_swallows_the_error_is_still_flagged():
    src = dedent(
        """\
        try:
            from torch.ao.quantization.quantizer.xnnpack_quantizer import XNNPACKQuantizer
            HAS_XNNPACK = True
        except ImportError:
            HAS_XNNPACK = False
        """
    )
    assert spots(ql401(src)) == [(2, 4)]
    assert "executorch.backends.xnnpack.quantizer.xnnpack_quantizer" in fixed(src)


# -- display-only ---------------------------------------------------------------------------
def test_name_without_successor_is_display_only():
    src = "from torch.ao.quantization.quantizer.qnnpack_quantizer import QNNPackQuantizer\n"
    (d,) = ql401(src)
    assert d.fix.applicability is Applicability.DISPLAY_ONLY
    assert "no successor" in d.message
    assert fixed(src, unsafe=True) == src


def test_prerelease_api_is_never_rewritten():
    src = "from torch.ao.quantization._quantize_pt2e import prepare_pt2e, convert_pt2e\n"
    (d,) = ql401(src)
    assert d.fix.applicability is Applicability.DISPLAY_ONLY
    assert "pre-release" in d.help and "torchao.quantization.pt2e.quantize_pt2e.prepare_pt2e" in d.help
    assert fixed(src, unsafe=True) == src


def test_unknown_name_moves_what_it_can_and_reports_the_rest():
    src = "from torch.ao.quantization.quantize_pt2e import prepare_pt2e, not_a_real_name\n"
    (d,) = ql401(src)
    assert "not_a_real_name" in d.help
    out = fixed(src)
    assert out == (
        "from torch.ao.quantization.quantize_pt2e import not_a_real_name\n"
        "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
    )
    (rest,) = ql401(out)
    assert rest.fix.applicability is Applicability.DISPLAY_ONLY


def test_star_import_is_display_only():
    (d,) = ql401("from torch.ao.quantization.quantizer import *\n")
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_successor_package_itself_is_not_rewritten(tmp_path):
    pkg = write_package(tmp_path, "torchao.quantization.pt2e")
    src = dedent(
        """\
        import torch

        def prepare_pt2e(model, quantizer):
            if isinstance(quantizer, torch.ao.quantization.quantizer.quantizer.Quantizer):
                from torch.ao.quantization.quantize_pt2e import prepare_pt2e as legacy
                return legacy(model, quantizer)
            return model
        """
    )
    path = str(pkg / "quantize_pt2e.py")
    ds = ql401(src, path=path)
    assert len(ds) == 2 and all(d.fix.applicability is Applicability.DISPLAY_ONLY for d in ds)
    assert fixed(src, path=path, unsafe=True) == src


def test_project_modules_named_like_the_old_ones_are_quiet(tmp_path):
    pkg = write_package(tmp_path, "mybackend", quantizer="class Quantizer: ...\n")
    src = "import torch\nfrom .quantizer import Quantizer\nfrom mybackend import quantizer\nq = quantizer.Quantizer()\n"
    assert ql401(src, path=str(pkg / "flow.py")) == []


def test_the_example_legacy_flow_is_fully_migrated(root):
    path = root / "examples" / "recipes" / "legacy_pt2e_flow.py"
    src = path.read_text()
    assert spots(ql401(src, path=str(path))) == [(4, 7), (5, 0), (6, 0), (10, 0), (27, 4)]
    out = fixed(src, path=str(path), unsafe=True)
    assert ql401(out, path=str(path)) == []
    assert "import torchao.quantization.pt2e.quantize_pt2e as qp" in out
    assert "from torchao.quantization.pt2e import MinMaxObserver\n" in out


# -- splitting keeps comments and suppressions ------------------------------------------------
def test_split_keeps_the_comment_after_a_moved_name():
    src = dedent(
        """\
        from torch.ao.quantization.quantizer import (
            Quantizer,  # base
            XNNPACKQuantizer,  # second
        )
        """
    )
    assert fixed(src, unsafe=True) == dedent(
        """\
        from torchao.quantization.pt2e.quantizer import (
            Quantizer,  # base
        )
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer,  # second
        )
        """
    )


def test_split_carries_a_trailing_noqa_onto_every_new_statement():
    src = "from torch.ao.quantization.quantizer import Quantizer, XNNPACKQuantizer  # noqa: F401\n"
    out = fixed(src, unsafe=True)
    assert out == (
        "from torchao.quantization.pt2e.quantizer import Quantizer  # noqa: F401\n"
        "from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer  # noqa: F401\n"
    )


@pytest.mark.parametrize(
    ("head", "close"), [("  # noqa: F401", ""), ("", "  # NOQA: F401,E501")], ids=["first-line", "last-line"]
)
def test_split_carries_a_noqa_where_the_statement_had_it(head, close):
    src = (
        f"from torch.ao.quantization.quantizer import ({head}\n"
        f"    Quantizer,\n    XNNPACKQuantizer,  # second\n){close}\n"
    )
    out = fixed(src, unsafe=True)
    assert out == (
        f"from torchao.quantization.pt2e.quantizer import ({head}\n    Quantizer,\n){close}\n"
        f"from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import ({head}\n"
        f"    XNNPACKQuantizer,  # second\n){close}\n"
    )


def test_split_leaves_a_plain_statement_comment_on_the_original_only():
    src = "from torch.ao.quantization.quantizer import Quantizer, XNNPACKQuantizer  # quantizer API\n"
    assert fixed(src, unsafe=True) == (
        "from torchao.quantization.pt2e.quantizer import Quantizer  # quantizer API\n"
        "from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer\n"
    )


# -- trigger prefilter -----------------------------------------------------------------------
def test_trigger_ignores_the_successor_package_but_not_the_old_spellings():
    from qlint.rules.ql401_torch_ao_pt2e_import import TorchAoPt2eImport

    rule = TorchAoPt2eImport()
    assert not rule.triggered_by("from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n")
    assert rule.triggered_by("from torch.ao.quantization.quantize_pt2e import prepare_pt2e\n")
    assert rule.triggered_by("from ..ao.quantization.quantize_pt2e import prepare_pt2e\n")
    assert rule.triggered_by("from torch import ao\nao.quantization.quantize_pt2e.prepare_pt2e(m, q)\n")
    both = "import torchao.quantization\nfrom torch.ao.quantization.quantizer import Quantizer\n"
    assert rule.triggered_by(both)
    assert ql401(both)


def test_trigger_needs_a_moved_word_as_a_whole_word():
    # The words' pattern has no leading `\b`: the boundary before a match is checked by hand,
    # and a match that fails it must not hide a whole word later in the text.
    from qlint.analysis.edits.pt2e_moves import load_moves

    moves = load_moves()
    assert moves.mentioned("import torch.ao.quantization.quantizer\n")
    assert moves.mentioned("x_pt2e pt2e")  # the first occurrence is no word, the second is
    assert not moves.mentioned("x_pt2e my_quantizer quantizers pt2e_x \u00e9pt2e 1pt2e")
    assert moves.mentioned("(quantizer)")


def test_the_trigger_finds_a_word_where_a_bounded_pattern_of_the_words_does():
    # Each word is found by itself and its boundaries checked: the same answer as `\bword\b`
    # over all the words, whatever the neighbours (Unicode letters and digits are word
    # characters, as they are to `re`).
    import random
    import re

    from qlint.analysis.edits.pt2e_moves import load_moves

    moves = load_moves()
    reference = re.compile(r"\b(?:" + "|".join(map(re.escape, moves._words)) + r")\b")
    rng = random.Random(401)
    pieces = [*moves._words, "pt2e", "quantizer", "_", "x", "1", "\u00e9", "\u0663", ".", " ", "\n", "(", "s"]
    for _ in range(5_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 7)))
        assert moves.mentioned(text) == (reference.search(text) is not None), repr(text)


def test_imports_in_every_kind_of_block_are_found():
    # Only the fields that hold statements are walked: each block kind must still be reached.
    src = dedent(
        """
        import sys


        def f(flag):
            if flag:
                from torch.ao.quantization.quantize_pt2e import prepare_pt2e
            else:
                for _ in ():
                    from torch.ao.quantization.quantize_pt2e import convert_pt2e
            try:
                pass
            except KeyError:
                from torch.ao.quantization.quantize_pt2e import prepare_qat_pt2e
            finally:
                with open(sys.argv[0]):
                    from torch.ao.quantization.quantize_pt2e import convert_pt2e as c
            match flag:
                case 1:
                    from torch.ao.quantization.quantize_pt2e import prepare_pt2e as p


        class K:
            while True:
                from torch.ao.quantization.quantize_pt2e import prepare_pt2e as q
        """
    )
    assert [row for row, _ in spots(ql401(src))] == [7, 10, 14, 17, 20, 25]


# -- which rows are walked for attribute chains (`_identifier_rows`) ---------------------------
def test_a_chain_split_over_lines_and_heads_local_to_one_body():
    src = dedent(
        """\
        import torch


        def split(m):
            return (
                torch.ao.
                quantization.move_exported_model_to_eval(m)
            )


        def local_alias(m):
            tq = torch.ao.quantization
            return tq.move_exported_model_to_train(m)


        def same_name_elsewhere(m):
            tq = m
            return tq.move_exported_model_to_train(m)


        class Runner:
            api = torch.ao.quantization

            def run(self, m):
                return self.api.allow_exported_model_train_eval(m)


        def not_a_method(self, m):
            return self.api.allow_exported_model_train_eval(m)
        """
    )
    assert [row for row, _ in spots(ql401(src))] == [6, 13, 25]


@pytest.mark.parametrize(
    "line",
    [
        'node.meta["quantization_annotation"] = torch.ao_quantization.move_exported_model_to_eval(m)',
        "torchao.quantization.pt2e.move_exported_model_to_eval(m)",
        "torch.quantization_api.move_exported_model_to_eval(m)",
    ],
)
def test_longer_words_holding_quantization_are_quiet(line):
    assert ql401(f"import torch\nimport torchao\n\n\ndef f(node, m):\n    {line}\n") == []


def test_a_local_bound_to_one_chain_twice_names_it_and_one_bound_to_two_values_does_not():
    src = dedent(
        """\
        import torch


        def twice(m):
            tq = torch.ao.quantization
            tq = torch.ao.quantization
            return tq.move_exported_model_to_eval(m)


        def mixed(m, make):
            tq = make()
            tq = torch.ao.quantization
            return tq.move_exported_model_to_eval(m)
        """
    )
    assert [row for row, _ in spots(ql401(src))] == [7]


def test_keystrokes_that_rebind_a_local_give_a_fresh_check_s_findings(tmp_path):
    """The bindings of a function's body are kept on its node (`functions.Body.local`): an
    editor's next check reuses the nodes of the bodies the edit left alone."""
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from tests.conftest import settings_for

    base = dedent(
        """\
        import torch


        def outer(m):
            def inner(x):
                tq = x
                return tq.move_exported_model_to_eval(x)

            tq = m
            return tq.move_exported_model_to_eval(m), inner


        def other(m):
            tq = torch.ao.quantization
            return tq.move_exported_model_to_eval(m)
        """
    )
    texts = [
        base,
        base.replace("        tq = x\n", "        tq = torch.ao.quantization\n"),
        base,
        base.replace("    tq = m\n", "    tq = torch.ao.quantization\n"),
        base.replace("    tq = torch.ao.quantization\n    return", "    tq = m\n    return"),
        base,
    ]
    path = str(tmp_path / "checked.py")
    kept = ProjectIndex()
    seen = []
    for text in texts:
        settings = settings_for(("QL401",))
        rows = [
            [d.range.start.row for d in check_source(text.encode(), path, settings, project).diagnostics]
            for project in (kept, ProjectIndex())
        ]
        assert rows[0] == rows[1]
        seen.append(rows[0])
    assert seen == [[15], [7, 15], [15], [10, 15], [], [15]]
