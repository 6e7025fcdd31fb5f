// The model library: its numbers follow the derivations in doc/models.md,
// and every model spends a significant part of its iteration communicating
// on a 100 Gb/s NIC (the regime Harmonics is for).
#include <gtest/gtest.h>

#include <set>

#include "model/model_library.h"
#include "model/traffic.h"

using namespace harmonics;

TEST(ModelLibrary, HasTheWellKnownModels) {
    const auto& lib = model_library();
    EXPECT_GE(lib.size(), 12u);
    std::set<std::string> names;
    for (const auto& m : lib) EXPECT_TRUE(names.insert(m.name).second) << "duplicate " << m.name;
    for (const char* n : {"vgg16", "vgg19", "resnet50", "resnet101", "bert-base", "bert-large", "roberta-large",
                          "gpt2-xl", "gpt3-1.3b", "gpt3-6.7b", "dlrm", "vit-b16", "transformer-big"})
        EXPECT_NE(find_model(n), nullptr) << n;
}

TEST(ModelLibrary, LookupIsCaseInsensitive) {
    ASSERT_NE(find_model("ResNet50"), nullptr);
    EXPECT_EQ(find_model("ResNet50")->name, "resnet50");
    EXPECT_EQ(find_model("no-such-model"), nullptr);
}

TEST(ModelLibrary, ProfilesAreComplete) {
    for (const auto& m : model_library()) {
        EXPECT_GT(m.params, 0) << m.name;
        double width = m.grad_bytes / m.params;
        EXPECT_TRUE(width == 2.0 || width == 4.0) << m.name << " gradient bytes per parameter " << width;
        EXPECT_GT(m.compute_s, 0) << m.name;
        EXPECT_GT(m.batch_per_gpu, 0) << m.name;
        EXPECT_FALSE(m.gpu.empty()) << m.name;
        EXPECT_GE(m.overlap, 0) << m.name;
        EXPECT_LT(m.overlap, 1) << m.name;
    }
}

TEST(ModelLibrary, DerivedNumbers) {
    // ResNet-50: 25,557,032 fp32 gradients; 32 images at 2470 img/s.
    const ModelProfile* r = find_model("resnet50");
    EXPECT_DOUBLE_EQ(r->grad_bytes, 25557032.0 * 4);
    EXPECT_DOUBLE_EQ(r->compute_s, 32 / 2470.0);
    // VGG-16: 64 images, 15.3/3.8 times ResNet-50's work per image.
    EXPECT_DOUBLE_EQ(find_model("vgg16")->compute_s, 64 * (15.3 / 3.8) / 2470.0);
    // GPT-3 1.3B: 6·N·tokens at 137 TFLOP/s, 4 x 2048 tokens; fp16 gradients.
    const ModelProfile* g = find_model("gpt3-1.3b");
    EXPECT_DOUBLE_EQ(g->compute_s, 6 * 1.3e9 * 4 * 2048 / 137e12);
    EXPECT_DOUBLE_EQ(g->grad_bytes, 2.6e9);
    // DLRM (Criteo Kaggle): 33,762,577 embedding rows x 16.
    EXPECT_NEAR(find_model("dlrm")->params, 33762577.0 * 16, 1e6);
}

TEST(ModelLibrary, CommunicationIsASignificantShareOnA100GbpsNic) {
    // Two nodes of 8 GPUs in one rack: the ring crosses only 100 Gb/s NICs.
    Topology t = Topology::make_two_level(1, 2, 12.5e9, 1.0);
    JobSpec s;
    s.gpus_per_node = 8;
    for (const auto& m : model_library()) {
        JobProfile p = make_profile(t, s, m, {0, 1});
        ASSERT_EQ(p.phases.size(), 1u);
        double share = p.phases[0].alone_s / p.isolated_period_s;
        EXPECT_GT(share, 0.3) << m.name;
        EXPECT_GT(p.isolated_period_s, 0.01) << m.name;
        EXPECT_LT(p.isolated_period_s, 10.0) << m.name;
    }
}
