//===- KernelGlue.cpp - kernel ABI entry points and descriptors -----------===//

#include "KernelGlue.h"

#include "ffn/kernel_abi.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"

using namespace ffnc;

static int64_t abiDType(DType d) {
  switch (d) {
  case DType::F32:
    return FFN_DTYPE_F32;
  case DType::BF16:
    return FFN_DTYPE_BF16;
  case DType::F16:
    return FFN_DTYPE_F16;
  }
  return FFN_DTYPE_F32;
}

static int64_t abiActivation(Activation a) {
  switch (a) {
  case Activation::Relu:
    return FFN_ACT_RELU;
  case Activation::Gelu:
    return FFN_ACT_GELU;
  case Activation::GeluTanh:
    return FFN_ACT_GELU_TANH;
  case Activation::Silu:
    return FFN_ACT_SILU;
  case Activation::Sigmoid:
    return FFN_ACT_SIGMOID;
  case Activation::Identity:
    return FFN_ACT_IDENTITY;
  }
  return FFN_ACT_IDENTITY;
}

static int64_t abiNorm(NormKind n) {
  switch (n) {
  case NormKind::None:
    return FFN_NORM_NONE;
  case NormKind::LayerNorm:
    return FFN_NORM_LAYERNORM;
  case NormKind::RMSNorm:
    return FFN_NORM_RMSNORM;
  }
  return FFN_NORM_NONE;
}

namespace {
class GlueBuilder {
public:
  GlueBuilder(llvm::Module &m)
      : m(m), ctx(m.getContext()), i64(llvm::Type::getInt64Ty(ctx)),
        ptr(llvm::PointerType::getUnqual(ctx)) {}

  llvm::Error add(const KernelSignature &sig, const TargetInfo &target);
  llvm::Constant *buildLaunches(const KernelSignature &sig);

private:
  llvm::Constant *i64c(int64_t v) { return llvm::ConstantInt::get(i64, v); }
  llvm::Constant *string(llvm::StringRef s, llvm::StringRef symbol) {
    llvm::Constant *init = llvm::ConstantDataArray::getString(ctx, s);
    auto *g = new llvm::GlobalVariable(m, init->getType(), true,
                                       llvm::GlobalValue::PrivateLinkage, init,
                                       symbol);
    g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return g;
  }
  /// Appends the expanded memref descriptor of a dense row-major buffer:
  /// (allocated, aligned, offset, sizes..., strides...). A dynamic leading
  /// dimension is `rows`.
  void appendMemRef(llvm::SmallVectorImpl<llvm::Value *> &args, llvm::Value *p,
                    const KernelSignature::Arg &arg, llvm::Value *rows) {
    args.append({p, p, i64c(0)});
    for (int64_t d : arg.shape)
      args.push_back(d < 0 ? rows : i64c(d));
    for (size_t i = 0; i < arg.shape.size(); ++i) {
      int64_t stride = 1;
      for (size_t j = i + 1; j < arg.shape.size(); ++j)
        stride *= arg.shape[j];
      args.push_back(i64c(stride));
    }
  }
  static int64_t bytes(const KernelSignature::Arg &arg) {
    int64_t n = arg.elementBytes;
    for (int64_t d : arg.shape)
      n *= d;
    return n;
  }
  llvm::Function *buildPhase(const KernelSignature &sig, llvm::Function *impl);
  llvm::Function *buildRun(const KernelSignature &sig, llvm::Function *phase,
                           llvm::Function *units);
  static std::vector<std::vector<int64_t>>
  phaseUnits(const KernelSignature &sig) {
    if (sig.phaseUnits.empty())
      return {{1}};
    return sig.phaseUnits;
  }
  llvm::Function *buildUnits(const KernelSignature &sig);
  llvm::Function *buildPack(const KernelSignature &sig);

  llvm::Module &m;
  llvm::LLVMContext &ctx;
  llvm::IntegerType *i64;
  llvm::PointerType *ptr;
};
} // namespace

llvm::Function *GlueBuilder::buildPhase(const KernelSignature &sig,
                                        llvm::Function *impl) {
  // void phase(i64 phase, i64 m, ptr x, ptr params, ptr y, ptr ws,
  //            i64 begin, i64 end)
  auto *type =
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                              {i64, i64, ptr, ptr, ptr, ptr, i64, i64}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                    "ffn_" + sig.name + "_phase", m);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto *call = llvm::BasicBlock::Create(ctx, "call", fn);
  auto *done = llvm::BasicBlock::Create(ctx, "done", fn);
  llvm::IRBuilder<> b(entry);
  llvm::Value *rows = fn->getArg(1);
  // An empty range does nothing (the baseline kernel has one unit).
  b.CreateCondBr(b.CreateICmpSLT(fn->getArg(6), fn->getArg(7)), call, done);
  b.SetInsertPoint(call);
  llvm::SmallVector<llvm::Value *> args;
  appendMemRef(args, fn->getArg(2), sig.input, rows);
  for (auto [i, param] : llvm::enumerate(sig.params)) {
    llvm::Value *slot = b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(3), i);
    appendMemRef(args, b.CreateLoad(ptr, slot), param, rows);
  }
  appendMemRef(args, fn->getArg(4), sig.output, rows);
  if (sig.hasWorkspace) {
    llvm::Value *size = b.CreateMul(rows, i64c(sig.workspacePerRow));
    KernelSignature::Arg ws{{-1}, 1};
    appendMemRef(args, fn->getArg(5), ws, size);
  }
  if (!sig.phaseUnits.empty())
    args.append({fn->getArg(0), fn->getArg(6), fn->getArg(7)});
  b.CreateCall(impl, args);
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return fn;
}

llvm::Function *GlueBuilder::buildRun(const KernelSignature &sig,
                                      llvm::Function *phase,
                                      llvm::Function *units) {
  // Every phase over all its units, in order, on the calling thread.
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                       {i64, ptr, ptr, ptr, ptr}, false);
  auto *run = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                     "ffn_" + sig.name + "_run", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", run));
  llvm::Value *rows = run->getArg(0);
  // The phase function returns at once for an empty unit range, so the
  // phases of other buckets cost a call each.
  size_t phases = phaseUnits(sig)[0].size();
  for (size_t p = 0; p < phases; ++p) {
    llvm::Value *end = b.CreateCall(units, {i64c(p), rows});
    b.CreateCall(phase, {i64c(p), rows, run->getArg(1), run->getArg(2),
                         run->getArg(3), run->getArg(4), i64c(0), end});
  }
  b.CreateRetVoid();
  return run;
}

llvm::Function *GlueBuilder::buildUnits(const KernelSignature &sig) {
  // i64 units(i64 phase, i64 m): the bucket is the number of bounds below
  // m; a table entry of -1 means m.
  std::vector<std::vector<int64_t>> table = phaseUnits(sig);
  size_t phases = table[0].size();
  std::vector<llvm::Constant *> entries;
  for (const std::vector<int64_t> &row : table)
    for (int64_t u : row)
      entries.push_back(i64c(u));
  auto *tableType = llvm::ArrayType::get(i64, entries.size());
  auto *global = new llvm::GlobalVariable(
      m, tableType, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(tableType, entries),
      "ffn_" + sig.name + "_phase_table");
  auto *type = llvm::FunctionType::get(i64, {i64, i64}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                    "ffn_" + sig.name + "_phase_units", m);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto *valid = llvm::BasicBlock::Create(ctx, "valid", fn);
  auto *none = llvm::BasicBlock::Create(ctx, "none", fn);
  llvm::IRBuilder<> b(entry);
  llvm::Value *phase = fn->getArg(0), *rows = fn->getArg(1);
  b.CreateCondBr(b.CreateICmpULT(phase, i64c(phases)), valid, none);
  b.SetInsertPoint(valid);
  llvm::Value *bucket = i64c(0);
  for (int64_t bound : sig.bucketMaxM)
    bucket = b.CreateAdd(bucket,
                         b.CreateZExt(b.CreateICmpSGT(rows, i64c(bound)), i64));
  llvm::Value *index = b.CreateAdd(b.CreateMul(bucket, i64c(phases)), phase);
  llvm::Value *u = b.CreateLoad(
      i64, b.CreateInBoundsGEP(tableType, global, {i64c(0), index}));
  b.CreateRet(b.CreateSelect(b.CreateICmpSLT(u, i64c(0)), rows, u));
  b.SetInsertPoint(none);
  b.CreateRet(i64c(0));
  return fn;
}

llvm::Function *GlueBuilder::buildPack(const KernelSignature &sig) {
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                       {i64, ptr, ptr}, false);
  auto *pack = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                      "ffn_" + sig.name + "_pack", m);
  llvm::Value *src = pack->getArg(1), *dst = pack->getArg(2);
  auto *done = llvm::BasicBlock::Create(ctx, "done", pack);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", pack, done));
  llvm::SwitchInst *sw =
      b.CreateSwitch(pack->getArg(0), done, sig.params.size());
  for (size_t i = 0; i < sig.params.size(); ++i) {
    auto *bb = llvm::BasicBlock::Create(ctx, "param", pack, done);
    sw->addCase(llvm::cast<llvm::ConstantInt>(i64c(i)), bb);
    llvm::IRBuilder<> cb(bb);
    if (sig.packFunctions[i].empty()) {
      cb.CreateMemCpy(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1),
                      bytes(sig.params[i]));
    } else {
      llvm::Function *f = m.getFunction(sig.packFunctions[i]);
      f->setLinkage(llvm::GlobalValue::InternalLinkage);
      llvm::SmallVector<llvm::Value *> args;
      appendMemRef(args, src, sig.packSources[i], nullptr);
      appendMemRef(args, dst, sig.params[i], nullptr);
      cb.CreateCall(f, args);
    }
    cb.CreateBr(done);
  }
  llvm::IRBuilder<>(done).CreateRetVoid();
  return pack;
}

llvm::Constant *GlueBuilder::buildLaunches(const KernelSignature &sig) {
  // ffn_device_launch[] { kernel, min_m, max_m, rows_per_block, grid_y,
  // grid_z, block_threads, shared_bytes, num_args, args }
  auto *argType = llvm::StructType::get(ctx, {i64, i64});
  auto *launchType = llvm::StructType::get(
      ctx, {ptr, i64, i64, i64, i64, i64, i64, i64, i64, ptr});
  std::vector<llvm::Constant *> launches;
  for (auto [i, l] : llvm::enumerate(sig.launches)) {
    std::vector<llvm::Constant *> args;
    for (auto [kind, index] : l.args)
      args.push_back(
          llvm::ConstantStruct::get(argType, {i64c(kind), i64c(index)}));
    auto *arrayType = llvm::ArrayType::get(argType, args.size());
    auto *argArray = new llvm::GlobalVariable(
        m, arrayType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(arrayType, args),
        "ffn_" + sig.name + "_launch_args_" + std::to_string(i));
    launches.push_back(llvm::ConstantStruct::get(
        launchType, {string(l.kernel, ".ffn.kernel"), i64c(l.minM),
                     i64c(l.maxM), i64c(l.rowsPerBlock), i64c(l.gridY),
                     i64c(l.gridZ), i64c(l.threads), i64c(l.sharedBytes),
                     i64c(static_cast<int64_t>(args.size())), argArray}));
  }
  auto *arrayType = llvm::ArrayType::get(launchType, launches.size());
  return new llvm::GlobalVariable(m, arrayType, true,
                                  llvm::GlobalValue::PrivateLinkage,
                                  llvm::ConstantArray::get(arrayType, launches),
                                  "ffn_" + sig.name + "_launches");
}

llvm::Error GlueBuilder::add(const KernelSignature &sig,
                             const TargetInfo &target) {
  const std::vector<ParamInfo> &params = sig.paramInfo;
  llvm::Constant *null = llvm::ConstantPointerNull::get(ptr);
  // The code goes in the device's own entry; the other stays NULL.
  llvm::Constant *cpuCode = null, *cudaCode = null;
  if (sig.isDevice()) {
    // The cubin, 16-byte aligned (the driver reads ELF headers in place).
    llvm::Constant *init = llvm::ConstantDataArray::getRaw(
        sig.deviceImage, sig.deviceImage.size(), llvm::Type::getInt8Ty(ctx));
    auto *image = new llvm::GlobalVariable(m, init->getType(), true,
                                           llvm::GlobalValue::PrivateLinkage,
                                           init, "ffn_" + sig.name + "_cubin");
    image->setAlignment(llvm::Align(16));
    // ffn_cuda_code { image, image_size, num_launches, launches }
    auto *codeType = llvm::StructType::get(ctx, {ptr, i64, i64, ptr});
    cudaCode = new llvm::GlobalVariable(
        m, codeType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantStruct::get(
            codeType,
            {image, i64c(static_cast<int64_t>(sig.deviceImage.size())),
             i64c(static_cast<int64_t>(sig.launches.size())),
             buildLaunches(sig)}),
        "ffn_" + sig.name + "_cuda");
  } else {
    llvm::Function *impl = m.getFunction(sig.name);
    if (!impl)
      return llvm::createStringError("internal error: no lowered function '" +
                                     sig.name + "'");
    impl->setName("__ffn_" + sig.name + "_impl");
    impl->setLinkage(llvm::GlobalValue::InternalLinkage);
    llvm::Function *phaseFn = buildPhase(sig, impl);
    llvm::Function *unitsFn = buildUnits(sig);
    llvm::Function *entry = buildRun(sig, phaseFn, unitsFn);
    // ffn_cpu_code { run, num_phases, phase_units, phase }
    auto *codeType = llvm::StructType::get(ctx, {ptr, i64, ptr, ptr});
    cpuCode = new llvm::GlobalVariable(
        m, codeType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantStruct::get(
            codeType,
            {entry, i64c(static_cast<int64_t>(phaseUnits(sig)[0].size())),
             unitsFn, phaseFn}),
        "ffn_" + sig.name + "_cpu");
  }
  llvm::Function *pack = buildPack(sig);

  // ffn_param_desc[] { name, rank, shape[2], packed_bytes }
  auto *paramType = llvm::StructType::get(ctx, {ptr, i64, i64, i64, i64});
  std::vector<llvm::Constant *> paramDescs;
  for (auto [i, p] : llvm::enumerate(params))
    paramDescs.push_back(llvm::ConstantStruct::get(
        paramType, {string(p.name, ".ffn.param"), i64c(p.rank()), i64c(p.rows),
                    i64c(p.cols), i64c(bytes(sig.params[i]))}));
  auto *arrayType = llvm::ArrayType::get(paramType, paramDescs.size());
  auto *paramArray = new llvm::GlobalVariable(
      m, arrayType, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(arrayType, paramDescs),
      "ffn_" + sig.name + "_params");

  // Field for field, ffn_kernel_desc of kernel_abi.h (all 8-byte fields).
  llvm::Type *f64 = llvm::Type::getDoubleTy(ctx);
  auto *descType = llvm::StructType::get(
      ctx, {i64, i64, ptr, ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64,
            i64, f64, i64, i64, ptr, ptr, i64, ptr, ptr, ptr});
  const llvm::DataLayout &layout = m.getDataLayout();
  uint64_t size = layout.getTypeAllocSize(descType);
  if (size != sizeof(ffn_kernel_desc))
    return llvm::createStringError(
        "internal error: kernel descriptor layout mismatch");
  llvm::Constant *fields[] = {
      i64c(FFN_KERNEL_ABI_VERSION),
      i64c(size),
      string(sig.name, ".ffn.name"),
      string(target.name, ".ffn.target"),
      i64c(FFN_KIND_FFN),
      i64c(sig.isDevice() ? FFN_DEVICE_CUDA : FFN_DEVICE_CPU),
      i64c(sig.dModel),
      i64c(sig.dFF),
      i64c(abiDType(sig.dtype)),
      i64c(abiActivation(sig.activation)),
      i64c(sig.gated ? 1 : 0),
      i64c(sig.residual ? 1 : 0),
      i64c(abiNorm(sig.norm)),
      i64c(sig.normPosition == NormPosition::Post ? FFN_NORM_POST
                                                  : FFN_NORM_PRE),
      llvm::ConstantFP::get(f64,
                            sig.norm == NormKind::None ? 0.0 : sig.normEps),
      i64c(abiDType(sig.operandType)),
      i64c(static_cast<int64_t>(params.size())),
      paramArray,
      pack,
      i64c(sig.workspacePerRow),
      string(sig.strategy, ".ffn.strategy"),
      cpuCode,
      cudaCode};
  new llvm::GlobalVariable(
      m, descType, true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantStruct::get(descType, fields), "ffn_kernel_" + sig.name);
  return llvm::Error::success();
}

llvm::Error ffnc::addKernelGlue(llvm::Module &module,
                                llvm::ArrayRef<KernelSignature> signatures,
                                const TargetInfo &target) {
  GlueBuilder builder(module);
  for (const KernelSignature &sig : signatures)
    if (llvm::Error err = builder.add(sig, target))
      return err;
  return llvm::Error::success();
}
