//===- FfnInterfaces.td - ffn attribute interfaces ----------*- tablegen -*-===//

#ifndef FFN_IR_FFNINTERFACES_TD
#define FFN_IR_FFNINTERFACES_TD

include "mlir/IR/OpBase.td"

def Ffn_StrategyAttrInterface : AttrInterface<"StrategyAttrInterface"> {
  let cppNamespace = "::mlir::ffn";
  let description = [{
    How one back end schedules an `ffn.ffn`. Each target family has its own
    strategy attribute (`#ffn.cpu_strategy`, `#ffn.gpu_strategy`), so a new
    target adds an attribute and the passes that read it, and `ffn.ffn`
    holds any of them. The same attribute with knobs left unset is an
    override: what `--strategy=` and the selection passes' `overrides`
    option parse, the rest left to the target's cost model.
  }];
  let methods = [
    InterfaceMethod<
      "Every knob decided: what a lowering needs, and what an ffn.ffn holds.",
      "bool", "isComplete">,
    InterfaceMethod<
      "Whether this strategy schedules code for `target`, an #ffn.target "
      "(its family and width); the reason through `emitError` otherwise. "
      "(An Attribute: the interface is declared before the attributes.)",
      "::mlir::LogicalResult", "verifyForTarget",
      (ins "::mlir::Attribute":$target,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError)>,
    InterfaceMethod<
      "The schedule of a complete strategy in one line (for --emit, "
      "`ffnc info` and the kernel descriptor).",
      "std::string", "describe",
      (ins "bool":$gated, "int64_t":$dFf, "bool":$batchInvariant)>,
  ];
}

#endif // FFN_IR_FFNINTERFACES_TD
