// The model library. Every number is a published fact or derived from one by
// the formulas below; doc/models.md gives the source of each and the
// derivation. All compute times refer to one NVIDIA A100-SXM4-80GB.
#include "model/model_library.h"

#include <algorithm>
#include <cctype>

namespace harmonics {

namespace {

// Anchor for convolutional nets: ResNet-50 v1.5 trains at 2470 img/s on one
// A100 80GB with mixed precision, batch 256 (NVIDIA DeepLearningExamples,
// PyTorch ResNet50v1.5 README, pytorch-21.03). Other CNNs scale by their
// forward multiply-adds relative to ResNet-50's 3.8e9 (He et al. 2016).
constexpr double kResNet50ImgPerS = 2470.0;
constexpr double kResNet50GMac = 3.8;

// Anchor for transformers: 137 TFLOP/s achieved per A100 by Megatron-LM on a
// 1.7B GPT (Narayanan et al. SC'21, Table 1), and training FLOPs = 6·N·tokens
// (Kaplan et al. 2020).
constexpr double kTransformerFlops = 137e12;

// A100 80GB SXM memory bandwidth, for the memory-bound DLRM step.
constexpr double kA100HbmBps = 2.039e12;

// Share of the compute that the all-reduce may overlap. PyTorch DDP starts
// bucket all-reduces during the backward pass (2/3 of compute); we let
// traffic start halfway through it. Frameworks that all-reduce after the
// backward pass (Megatron-LM, DeepSpeed, the DeepLearningExamples BERT
// scripts with allreduce_post_accumulation) do not overlap.
constexpr double kDdpOverlap = 1.0 / 3.0;
constexpr double kNoOverlap = 0.0;

constexpr double kFp32 = 4.0;
constexpr double kFp16 = 2.0;

ModelProfile cnn(const char* name, double params, double gmac_per_image, int batch) {
    ModelProfile m;
    m.name = name;
    m.params = params;
    m.grad_bytes = params * kFp32;  // DDP + AMP keeps fp32 master weights and gradients
    m.batch_per_gpu = batch;
    m.compute_s = batch * (gmac_per_image / kResNet50GMac) / kResNet50ImgPerS;
    m.gpu = "A100-SXM4-80GB";
    m.overlap = kDdpOverlap;
    return m;
}

ModelProfile transformer(const char* name, double params, int batch, int tokens_per_sample, double grad_width,
                         double overlap) {
    ModelProfile m;
    m.name = name;
    m.params = params;
    m.grad_bytes = params * grad_width;
    m.batch_per_gpu = batch;
    m.compute_s = 6.0 * params * batch * tokens_per_sample / kTransformerFlops;
    m.gpu = "A100-SXM4-80GB";
    m.overlap = overlap;
    return m;
}

// DLRM, Criteo Kaggle configuration of facebookresearch/dlrm, trained with
// plain data parallelism (dense embedding gradients all-reduced).
ModelProfile dlrm() {
    constexpr double kEmbeddingRows = 33762577;  // sum of the 26 table sizes
    constexpr double kEmbeddingDim = 16;
    // Bottom MLP 13-512-256-64-16, top MLP 367-512-256-1 (367 = 16 + 27·26/2).
    constexpr double kMlpParams = (13 * 512 + 512) + (512 * 256 + 256) + (256 * 64 + 64) + (64 * 16 + 16) +
                                  (367 * 512 + 512) + (512 * 256 + 256) + (256 * 1 + 1);
    const double embedding = kEmbeddingRows * kEmbeddingDim;
    ModelProfile m;
    m.name = "dlrm";
    m.params = embedding + kMlpParams;
    m.grad_bytes = m.params * kFp32;
    m.batch_per_gpu = 128;
    // Memory-bound: zeroing the dense embedding gradient (4 B/param) and the
    // SGD step (read weight and gradient, write weight: 12 B/param).
    m.compute_s = 16.0 * embedding / kA100HbmBps;
    m.gpu = "A100-SXM4-80GB";
    m.overlap = kDdpOverlap;
    return m;
}

std::vector<ModelProfile> build() {
    return {
        cnn("vgg16", 138357544, 15.3, 64),
        cnn("vgg19", 143667240, 19.6, 64),
        cnn("resnet50", 25557032, 3.8, 32),
        cnn("resnet101", 44549160, 7.6, 32),
        // ViT: a transformer over 197 tokens per image (196 patches + class
        // token), trained with PyTorch DDP: fp32 gradients, DDP overlap.
        transformer("vit-b16", 86567656, 64, 197, kFp32, kDdpOverlap),
        transformer("bert-base", 110e6, 64, 128, kFp16, kNoOverlap),
        transformer("bert-large", 340e6, 64, 128, kFp16, kNoOverlap),
        transformer("roberta-large", 355e6, 8, 512, kFp16, kDdpOverlap),
        transformer("transformer-big", 213e6, 3125, 1, kFp16, kDdpOverlap),  // batch in tokens
        transformer("gpt2-xl", 1.558e9, 8, 1024, kFp16, kNoOverlap),
        transformer("gpt3-1.3b", 1.3e9, 4, 2048, kFp16, kNoOverlap),
        transformer("gpt3-6.7b", 6.7e9, 4, 2048, kFp16, kNoOverlap),
        dlrm(),
    };
}

std::string lower(const std::string& s) {
    std::string out = s;
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

}  // namespace

const std::vector<ModelProfile>& model_library() {
    static const std::vector<ModelProfile> lib = build();
    return lib;
}

const ModelProfile* find_model(const std::string& name) {
    const std::string key = lower(name);
    for (const ModelProfile& m : model_library())
        if (m.name == key) return &m;
    return nullptr;
}

}  // namespace harmonics
