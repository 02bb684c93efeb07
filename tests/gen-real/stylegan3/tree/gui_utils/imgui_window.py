import os
import imgui
import imgui.integrations.glfw
