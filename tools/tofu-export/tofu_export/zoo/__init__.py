"""Built-in models of tofu-export: the paper's Wide ResNets and LSTM
language model, and a GPT-style transformer."""
