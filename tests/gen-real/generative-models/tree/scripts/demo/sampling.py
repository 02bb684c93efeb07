from pytorch_lightning import seed_everything

from scripts.demo.streamlit_helpers import *

SAVE_PATH = "outputs/demo/txt2img/"

VERSION2SPECS = {
    "SDXL-base-1.0": {
        "config": "configs/inference/sd_xl_base.yaml",
        "ckpt": "checkpoints/sd_xl_base_1.0.safetensors",
    },
}

if __name__ == "__main__":
    st.title("Stable Diffusion")
    save_locally, save_path = init_save_locally(os.path.join(SAVE_PATH, version))
