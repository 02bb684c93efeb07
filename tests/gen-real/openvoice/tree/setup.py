from setuptools import setup, find_packages

setup(name='MyShell-OpenVoice',
      version='0.0.0',
      packages=find_packages(),
      python_requires='<4',
      install_requires=[
            'librosa==0.9.1',
            'faster-whisper==1.0.2',
            'pydub==0.25.1',
            'wavmark==0.0.3',
            'numpy==1.26.4',
            'eng_to_ipa==0.0.2',
            'inflect==7.0.0',
            'unidecode==1.3.7',
            'whisper-timestamped==1.14.2',
            'pypinyin==0.50.0',
            'cn2an==0.5.22',
            'jieba==0.42.1',
            'gradio==3.48.0',
            'langid==1.1.6'
      ],
      zip_safe=False
      )
