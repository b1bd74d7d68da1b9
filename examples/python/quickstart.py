import ffnc, torch, torch.nn.functional as F
fc1, fc2 = torch.nn.Linear(768, 3072), torch.nn.Linear(3072, 768)
k = ffnc.compile("ffn mlp { d_model = 768; d_ff = 3072; activation = gelu }")
k.load({"w_up": fc1.weight, "b_up": fc1.bias, "w_down": fc2.weight, "b_down": fc2.bias})
x = torch.randn(16, 768); print((k(x) - fc2(F.gelu(fc1(x)))).abs().max())
