import whisper

model = whisper.load_model("base")
