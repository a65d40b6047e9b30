"""The models: the embedder and its encoders (torch, ONNX, OpenVINO), the copies made for this computer (derived),
the multilingual model, the similarity scales, and token counting by the model's tokenizer (tokens)."""
