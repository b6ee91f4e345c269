"""A QAT recipe that captures the model while it is still in eval mode (QL202).

`validate` puts the float model in eval mode to measure its accuracy; capturing it right
after gives `prepare_qat_pt2e` a graph with disabled dropout and eval-mode batch norm, so
fine-tuning neither regularises nor updates those statistics. The capture needs
`model.train()` first, as `quantize_aware` below does.
"""

import torch
from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config


class Classifier(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(32, 32)
        self.bn = torch.nn.BatchNorm1d(32)
        self.dropout = torch.nn.Dropout(0.1)
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.dropout(torch.relu(self.bn(self.fc(x)))))


def validate(model: torch.nn.Module, batches: list[torch.Tensor]) -> float:
    model.eval()
    with torch.no_grad():
        return sum(float(model(b).max()) for b in batches) / len(batches)


def fine_tune(prepared: torch.fx.GraphModule, batches: list[torch.Tensor]) -> None:
    optimizer = torch.optim.SGD(prepared.parameters(), lr=1e-3)
    for batch in batches:
        loss = prepared(batch).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def quantize_after_validation(batches: list[torch.Tensor]) -> torch.fx.GraphModule:
    model = Classifier()
    print("float accuracy", validate(model, batches))
    graph = torch.export.export(model, (batches[0],)).module()
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_qat=True))
    prepared = prepare_qat_pt2e(graph, quantizer)
    fine_tune(prepared, batches)
    return convert_pt2e(prepared)


def quantize_aware(batches: list[torch.Tensor]) -> torch.fx.GraphModule:
    model = Classifier()
    print("float accuracy", validate(model, batches))
    model.train()
    graph = torch.export.export(model, (batches[0],)).module()
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_qat=True))
    prepared = move_exported_model_to_train(prepare_qat_pt2e(graph, quantizer))
    fine_tune(prepared, batches)
    return convert_pt2e(move_exported_model_to_eval(prepared))
